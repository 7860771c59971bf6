// serve::Server in-process on an ephemeral loopback port, driven with
// httplib::Client: health, metadata, JSON inference equal to Session::run,
// batched-vs-single equality under concurrent clients, the 4xx/5xx paths,
// two models at once and a stop with a request in flight.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <regex>
#include <thread>

#include "ember/ember.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/serve/server.h"
#include "ember/train/models.h"
#include "serve_test_util.h"

namespace ember::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::RunningServer;
using testing::wait_for_queue_depth;

// A small CNN traced with a dynamic batch dim ("cnn") or a fixed batch of 2
// ("fixed"), saved under a per-process directory.
class ModelFiles {
 public:
  ModelFiles() : dir_(fs::temp_directory_path() / fmt::format("ember_serve_{}", ::getpid())) {
    fs::create_directories(dir_);
    cnn = save("cnn", true, 41);
    fixed = save("fixed", false, 42);
  }
  ~ModelFiles() { fs::remove_all(dir_); }
  std::string cnn, fixed;

 private:
  std::string save(const std::string& name, bool dynamic, uint64_t seed) {
    manual_seed(seed);
    train::CNNOptions o;
    o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
    o.channels = {4, 8};
    o.hidden = 16;
    train::CNN m(o);
    m.eval();
    jit::TraceOptions t;
    t.input_names = {"image"};
    t.output_names = {"logits"};
    if (dynamic) t.dynamic_dims = {{0, 0, "batch"}};
    jit::ModelFile f;
    f.graph = jit::trace(m, {randn({2, 1, 12, 12})}, t);
    std::string path = (dir_ / (name + ".ember")).string();
    jit::save_model(f, path);
    return path;
  }
  fs::path dir_;
};

const ModelFiles& models() {
  static ModelFiles files;
  return files;
}

std::string infer_body(const Tensor& x, const std::string& name = "image", const std::string& datatype = "FP32") {
  Tensor c = x.contiguous();
  std::vector<float> data(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
  json body = {{"inputs", json::array({{{"name", name}, {"shape", shape}, {"datatype", datatype}, {"data", data}}})}};
  return body.dump();
}

// The response's one output as a tensor.
Tensor output_of(const std::string& body) {
  json j = json::parse(body);
  const json& out = j.at("outputs").at(0);
  EXPECT_EQ(out.at("name"), "logits");
  EXPECT_EQ(out.at("datatype"), "FP32");
  std::vector<float> data = out.at("data").get<std::vector<float>>();
  return tensor(data, out.at("shape").get<std::vector<int64_t>>());
}

float max_abs_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<float>(); }

TEST(Serve, HealthAndMetadata) {
  RunningServer s({models().cnn, models().fixed}, {});
  httplib::Client c = s.client();
  for (const char* path : {"/v2/health/live", "/v2/health/ready"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
  }
  auto r = c.Get("/v2/models/cnn");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  json m = json::parse(r->body);
  EXPECT_EQ(m.at("name"), "cnn");
  EXPECT_EQ(m.at("inputs"), json::parse(R"([{"name":"image","datatype":"FP32","shape":[-1,1,12,12]}])"));
  EXPECT_EQ(m.at("outputs"), json::parse(R"([{"name":"logits","datatype":"FP32","shape":[-1,5]}])"));
  r = c.Get("/v2/models/fixed");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body).at("inputs").at(0).at("shape"), json::parse("[2,1,12,12]"));
  r = c.Get("/v2/models/fixed/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body), json::parse(R"({"name":"fixed","ready":true})"));
  r = c.Get("/v2");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body).at("name"), "ember");
  r = c.Get("/v2/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body).at("error"), "no route GET /v2/nothing");
}

TEST(Serve, InferJsonEqualsSessionRun) {
  RunningServer s({models().cnn}, {});
  runtime::Session ref(models().cnn);
  httplib::Client c = s.client();
  manual_seed(7);
  for (int64_t b : {1, 3}) {
    Tensor x = randn({b, 1, 12, 12});
    auto r = c.Post("/v2/models/cnn/infer", infer_body(x), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body).at("model_name"), "cnn");
    Tensor got = output_of(r->body);
    // Alone in its batch, and floats survive JSON exactly (17 digits).
    EXPECT_TRUE(equal(got, ref.run(std::vector<Tensor>{x})[0])) << b;
  }
}

TEST(Serve, ConcurrentClientsGetTheirOwnRows) {
  ServerOptions o;
  o.max_batch = 16;
  o.max_delay_us = 20000;  // long enough that concurrent requests meet
  RunningServer s({models().cnn}, o);
  runtime::Session ref(models().cnn);
  constexpr int kClients = 12, kRequests = 4;
  std::vector<Tensor> inputs;
  manual_seed(8);
  for (int i = 0; i < kClients * kRequests; ++i) inputs.push_back(randn({1 + i % 3, 1, 12, 12}));
  std::vector<std::string> bodies(inputs.size());
  std::vector<int> statuses(inputs.size(), 0);
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t)
    clients.emplace_back([&, t] {
      httplib::Client c = s.client();
      for (int k = 0; k < kRequests; ++k) {
        size_t i = static_cast<size_t>(t * kRequests + k);
        auto r = c.Post("/v2/models/cnn/infer", infer_body(inputs[i]), "application/json");
        if (r) statuses[i] = r->status, bodies[i] = r->body;
      }
    });
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(statuses[i], 200) << i << ": " << bodies[i];
    Tensor got = output_of(bodies[i]);
    Tensor want = ref.run(std::vector<Tensor>{inputs[i]})[0];
    ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << i;
    EXPECT_LE(max_abs_diff(got, want), 1e-6f) << i;
    EXPECT_TRUE(equal(got.argmax(1), want.argmax(1))) << i;
  }
  // Requests were merged: fewer model runs than requests.
  auto m = s.client().Get("/metrics");
  ASSERT_TRUE(m);
  std::smatch runs;
  ASSERT_TRUE(std::regex_search(m->body, runs, std::regex("ember_batch_size_count\\{model=\"cnn\"\\} (\\d+)")));
  EXPECT_LT(std::stoi(runs[1]), kClients * kRequests) << m->body;
}

// The binary data extension: the header JSON, then the input's raw floats.
httplib::Result post_binary(httplib::Client& c, const Tensor& x, size_t declared_bytes, const std::string& extra = "") {
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  json header = {{"inputs", json::array({{{"name", "image"}, {"shape", shape}, {"datatype", "FP32"},
                                          {"parameters", {{"binary_data_size", declared_bytes}}}}})},
                 {"outputs", json::array({{{"name", "logits"}, {"parameters", {{"binary_data", true}}}}})}};
  std::string body = header.dump();
  httplib::Headers h = {{"Inference-Header-Content-Length", std::to_string(body.size())}};
  body.append(static_cast<const char*>(x.data_ptr()), static_cast<size_t>(x.numel()) * sizeof(float));
  return c.Post("/v2/models/cnn/infer", h, body + extra, "application/octet-stream");
}

TEST(Serve, BinaryDataExtension) {
  RunningServer s({models().cnn}, {});
  runtime::Session ref(models().cnn);
  httplib::Client c = s.client();
  Tensor x = randn({3, 1, 12, 12});
  auto r = post_binary(c, x, 3 * 144 * 4);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  size_t n = std::stoul(r->get_header_value("Inference-Header-Content-Length"));
  json header = json::parse(r->body.substr(0, n));
  const json& out = header.at("outputs").at(0);
  EXPECT_EQ(out.at("shape"), json::parse("[3,5]"));
  EXPECT_EQ(out.at("parameters").at("binary_data_size"), 3 * 5 * 4);
  ASSERT_EQ(r->body.size(), n + 3 * 5 * 4);
  Tensor want = ref.run(std::vector<Tensor>{x})[0];
  EXPECT_EQ(std::memcmp(r->body.data() + n, want.data_ptr(), 3 * 5 * 4), 0);  // bitwise
  struct Bad {
    size_t declared;
    std::string extra, message;
  };
  for (const Bad& b : {Bad{100, "", "binary_data_size: shape [3, 1, 12, 12] of FP32 needs 1728 bytes, got 100"},
                       Bad{1728, "xy", "2 bytes after the last binary input"}}) {
    r = post_binary(c, x, b.declared, b.extra);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find(b.message), std::string::npos) << r->body;
  }
  r = post_binary(c, x.narrow(0, 0, 1).contiguous(), 3 * 144 * 4);  // declares more than the body holds
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("needs 576 bytes, got 1728"), std::string::npos) << r->body;
  for (const char* length : {"abc", "99999999"}) {
    r = c.Post("/v2/models/cnn/infer", {{"Inference-Header-Content-Length", length}}, "{}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << length;
    EXPECT_NE(r->body.find("Inference-Header-Content-Length"), std::string::npos) << r->body;
  }
  // binary_data_size in a plain JSON body.
  std::string body = R"({"inputs":[{"name":"image","shape":[1,1,12,12],"datatype":"FP32","parameters":{"binary_data_size":576}}]})";
  r = c.Post("/v2/models/cnn/infer", body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("without an Inference-Header-Content-Length header"), std::string::npos) << r->body;
}

struct ErrorCase {
  std::string path, body;
  int status;
  std::string message;  // a part of the error message
};

TEST(Serve, BadRequestsAnswer4xxNamingTheField) {
  ServerOptions o;
  o.max_body = 64 << 10;
  RunningServer s({models().cnn}, o);
  httplib::Client c = s.client();
  const std::string infer = "/v2/models/cnn/infer";
  Tensor x = randn({2, 1, 12, 12});
  std::string ones_143;
  for (int i = 0; i < 143; ++i) ones_143 += "1,";
  std::vector<ErrorCase> cases = {
      {"/v2/models/nope/infer", infer_body(x), 404, "unknown model 'nope'; serving cnn"},
      {infer, "{\"inputs\": [", 400, "malformed JSON"},
      {infer, "[]", 400, "JSON object"},
      {infer, "{}", 400, "missing \"inputs\""},
      {infer, "{\"inputs\": 5}", 400, "inputs: expected an array"},
      {infer, "{\"inputs\": [1]}", 400, "inputs[0]: expected an object"},
      {infer, infer_body(x, "img"), 400, "unknown input 'img'; the model's inputs are image"},
      {infer, infer_body(x, "image", "FP64"), 400, "inputs[0] ('image').datatype: expected \"FP32\", got \"FP64\""},
      {infer, infer_body(randn({2, 1, 12, 11})), 400,
       "inputs[0] ('image').shape: expected shape [-1, 1, 12, 12] (float32[batch, 1, 12, 12]), got [2, 1, 12, 11]"},
      {infer, infer_body(randn({2, 12, 12})), 400, "expected shape [-1, 1, 12, 12]"},
      {infer, R"({"inputs":[{"name":"image","shape":[0,1,12,12],"datatype":"FP32","data":[]}]})", 400,
       "must be at least 1"},
      {infer, R"({"inputs":[{"name":"image","shape":[4611686018427387904,1,12,12],"datatype":"FP32","data":[]}]})",
       400, "too large"},
      {infer, R"({"inputs":[{"name":"image","shape":[1,1,12,12],"datatype":"FP32","data":[1,2]}]})", 400,
       "needs 144 values, got 2"},
      {infer, R"({"inputs":[{"name":"image","shape":[1,1,12,12],"datatype":"FP32","data":[)" + ones_143 +
                  R"("a"]}]})",
       400, "data[143] is string, expected a number"},
      {infer, R"({"inputs":[{"name":"image","shape":[1,1,12,12],"datatype":"FP32","data":[[[[[[1]]]]]]}]})", 400,
       "nested deeper"},
      {infer, R"({"inputs":[{"name":"image","shape":"x","datatype":"FP32","data":[]}]})", 400, "shape: expected"},
      {infer, R"({"inputs":[{"name":"image","shape":[1,1,12,12],"datatype":"FP32","data":[)" + ones_143 + "1e300]}]}",
       400, "data[143] = 1e+300 is out of range"},
      {infer, R"({"inputs":[]})", 400, "missing input 'image' (FP32 with shape [-1, 1, 12, 12])"},
      {infer, infer_body(randn({40, 1, 12, 12})), 413, "larger than --max-body (65536 bytes)"},
  };
  for (const ErrorCase& e : cases) {
    auto r = c.Post(e.path, e.body, "application/json");
    ASSERT_TRUE(r) << e.body.substr(0, 80);
    EXPECT_EQ(r->status, e.status) << e.body.substr(0, 80) << " -> " << r->body;
    json answer = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(answer.is_object() && answer.contains("error")) << r->body;
    EXPECT_NE(answer["error"].get<std::string>().find(e.message), std::string::npos)
        << e.body.substr(0, 80) << " -> " << r->body;
  }
  auto r = c.Get("/v2/models/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  // Still serving after all of that.
  r = c.Post(infer, infer_body(x), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("ember_requests_total{code=\"400\"} 17"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_requests_total{code=\"413\"} 1"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_requests_total{code=\"404\"} 2"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_queue_depth{model=\"cnn\"} 0"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_request_duration_seconds_count{model=\"cnn\"} 1"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_batch_size_bucket{model=\"cnn\",le=\"2\"} 1"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_model_load_seconds{model=\"cnn\"}"), std::string::npos) << r->body;
}

TEST(Serve, FullQueueAnswers503WithRetryAfter) {
  ServerOptions o;
  o.queue = 1;
  o.max_delay_us = 2000000;  // the first request waits in the queue up to this long
  RunningServer s({models().cnn}, o);
  Tensor x = randn({1, 1, 12, 12});
  int first = 0;
  std::thread t([&] {
    auto r = s.client().Post("/v2/models/cnn/infer", infer_body(x), "application/json");
    if (r) first = r->status;
  });
  EXPECT_TRUE(wait_for_queue_depth(s, "cnn", 1));
  auto r = s.client().Post("/v2/models/cnn/infer", infer_body(x), "application/json");
  t.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(r->body.find("queue is full"), std::string::npos) << r->body;
  EXPECT_EQ(first, 200);
}

TEST(Serve, SlowAnswerIs504) {
  ServerOptions o;
  o.max_delay_us = 400000;  // the request waits for company longer than the timeout
  o.timeout_ms = 50;
  RunningServer s({models().cnn}, o);
  auto r = s.client().Post("/v2/models/cnn/infer", infer_body(randn({1, 1, 12, 12})), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 504) << r->body;
  EXPECT_NE(r->body.find("did not answer within 50 ms"), std::string::npos) << r->body;
}

// A request that times out while queued is taken out of the queue and never
// run: no model run is counted, the cancel counter is, and the requests
// queued behind it still run.
TEST(Serve, TimedOutRequestIsRemovedNotRun) {
  ServerOptions o;
  o.max_delay_us = 300000;  // the batcher waits for company far past the timeout
  o.timeout_ms = 50;
  RunningServer s({models().cnn}, o);
  httplib::Client c = s.client();
  auto r = c.Post("/v2/models/cnn/infer", infer_body(randn({1, 1, 12, 12})), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 504) << r->body;
  EXPECT_NE(r->body.find("the request was not run"), std::string::npos) << r->body;
  // Past the batcher's deadline for that request: had it stayed queued, it would have run by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("ember_requests_cancelled_total{model=\"cnn\"} 1"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("ember_batch_size_count{model=\"cnn\"}"), std::string::npos) << "a model run: " << r->body;
  EXPECT_NE(r->body.find("ember_queue_depth{model=\"cnn\"} 0"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("ember_requests_total{code=\"504\"} 1"), std::string::npos) << r->body;
}

// The batcher was waiting on the cancelled request's deadline; the next
// request gets its own full wait and an answer. The timeout must also cover
// one model run of the second request on a loaded CI machine under ASan (a
// 30 ms timeout failed there: 504 for the request that should have run).
TEST(Serve, RequestsAfterACancelledOneStillRun) {
  ServerOptions o;
  o.max_delay_us = 5000000;  // the batcher waits for company far past the timeout
  o.timeout_ms = 400;
  o.max_batch = 2;  // two rows answer at once, without waiting for the deadline
  RunningServer s({models().cnn}, o);
  runtime::Session ref(models().cnn);
  auto first = s.client().Post("/v2/models/cnn/infer", infer_body(randn({1, 1, 12, 12})), "application/json");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 504);
  Tensor x = randn({2, 1, 12, 12});
  auto r = s.client().Post("/v2/models/cnn/infer", infer_body(x), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(equal(output_of(r->body), ref.run(std::vector<Tensor>{x})[0]));
}

TEST(Serve, TwoModelsAtOnce) {
  RunningServer s({models().cnn, models().fixed}, {});
  runtime::Session cnn(models().cnn), fixed(models().fixed);
  manual_seed(9);
  Tensor a = randn({3, 1, 12, 12}), b = randn({2, 1, 12, 12});
  std::string got_a, got_b;
  std::thread ta([&] {
    auto r = s.client().Post("/v2/models/cnn/infer", infer_body(a), "application/json");
    if (r && r->status == 200) got_a = r->body;
  });
  std::thread tb([&] {
    auto r = s.client().Post("/v2/models/fixed/infer", infer_body(b), "application/json");
    if (r && r->status == 200) got_b = r->body;
  });
  ta.join(), tb.join();
  ASSERT_FALSE(got_a.empty());
  ASSERT_FALSE(got_b.empty());
  EXPECT_TRUE(equal(output_of(got_a), cnn.run(std::vector<Tensor>{a})[0]));
  EXPECT_TRUE(equal(output_of(got_b), fixed.run(std::vector<Tensor>{b})[0]));
  // The fixed model takes exactly its traced batch.
  auto r = s.client().Post("/v2/models/fixed/infer", infer_body(a), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("expected shape [2, 1, 12, 12]"), std::string::npos) << r->body;
}

TEST(Serve, StopFinishesTheRequestInFlight) {
  ServerOptions o;
  o.max_delay_us = 500000;  // in flight while stop() runs
  RunningServer s({models().cnn}, o);
  runtime::Session ref(models().cnn);
  Tensor x = randn({2, 1, 12, 12});
  std::string body;
  int status = 0;
  std::thread t([&] {
    auto r = s.client().Post("/v2/models/cnn/infer", infer_body(x), "application/json");
    if (r) status = r->status, body = r->body;
  });
  EXPECT_TRUE(wait_for_queue_depth(s, "cnn", 1));
  s.stop();  // returns once serve() has returned
  t.join();
  ASSERT_EQ(status, 200) << body;
  EXPECT_TRUE(equal(output_of(body), ref.run(std::vector<Tensor>{x})[0]));
  httplib::Client c = s.client();
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get("/v2/health/live"));  // no longer accepting
}

TEST(Serve, ParseByteSize) {
  EXPECT_EQ(parse_byte_size("16MiB"), size_t{16} << 20);
  EXPECT_EQ(parse_byte_size("512KiB"), size_t{512} << 10);
  EXPECT_EQ(parse_byte_size("1000"), 1000u);
  EXPECT_EQ(parse_byte_size("2G"), 2000000000u);
  EXPECT_THROW(parse_byte_size("MiB"), Error);
  EXPECT_THROW(parse_byte_size("-1"), Error);
  EXPECT_THROW(parse_byte_size("12 MiB"), Error);
}

TEST(Serve, UnloadableModelThrowsNamingTheFile) {
  try {
    Server s({"/nonexistent/model.ember"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.ember"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember::serve

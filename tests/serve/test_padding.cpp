// Variable-length sequences through the batcher (Note [sequence padding]):
// the zoo's LSTM, GRU and transformer classifiers traced at a fixed length
// take shorter requests padded to it; a jit::while_loop model with a dynamic
// "seq" dim batches requests of different lengths padded to the longest.
// Each request's outputs equal its single-request outputs within 1e-6 with
// the same argmax (and the eager model on the unpadded tokens).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <thread>

#include "ember/ember.h"
#include "ember/jit/control_flow.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"
#include "serve_test_util.h"

namespace ember::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Tensors = std::vector<Tensor>;
using testing::response_output;
using testing::RunningServer;
using testing::tensors_body;

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / fmt::format("ember_serve_padding_{}", ::getpid());
  fs::create_directories(d);
  return d;
}

Tensor lengths_of(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor<int64_t>(v, {n});
}

// Sums tanh-accumulated steps t < length of x [B, T, 4] (a jit::while_loop
// over t < max(lengths), so T stays dynamic), then a Linear to 3 classes; a
// second output per step, 2x, follows the same "seq" dim.
class LoopModel : public nn::Module {
 public:
  LoopModel() : nn::Module("LoopModel") { fc = register_module("fc", std::make_shared<nn::Linear>(4, 3)); }
  using nn::Module::forward;  // this one takes the lengths too
  Tensors forward(const Tensor& x, const Tensor& lengths) {
    Tensor acc = zeros({x.size(0), x.size(2)});
    Tensor t0 = zeros({}, TensorOptions().dtype(kInt64));
    Tensor steps = max(lengths);
    Tensors out = jit::while_loop([&](const Tensors& c) { return lt(c[0], steps); },
                                  [&](const Tensors& c) {
                                    Tensor xt = index_select(x, 1, c[0].reshape({1})).squeeze(1);
                                    Tensor keep = gt(lengths, c[0]).unsqueeze(1);
                                    return Tensors{c[0] + 1, where(keep, tanh(c[1] * 0.5 + xt), c[1])};
                                  },
                                  {t0, acc});
    return {fc->forward(out[1]), x * 2.0};
  }
  std::shared_ptr<nn::Linear> fc;
};

std::string save_loop_model(const fs::path& dir) {
  manual_seed(61);
  LoopModel m;
  m.eval();
  jit::TraceOptions o;
  o.input_names = {"x", "lengths"};
  o.output_names = {"logits", "per_step"};
  o.dynamic_dims = {{0, 0, "batch"}, {1, 0, "batch"}, {0, 1, "seq"}};
  jit::ModelFile f;
  // Example lengths within the probe sizes of seq (7 - 2): the probes run the loop.
  f.graph = jit::trace(
      m, [&m](const Tensors& in) { return m.forward(in[0], in[1]); }, {randn({3, 7, 4}), lengths_of({5, 2, 4})}, o);
  std::string path = (dir / "seq.ember").string();
  jit::save_model(f, path);
  return path;
}

int64_t model_runs(const RunningServer& s, const std::string& model) {
  auto m = s.client().Get("/metrics");
  std::smatch runs;
  const std::string body = m ? m->body : "";
  if (!std::regex_search(body, runs, std::regex("ember_batch_size_count\\{model=\"" + model + "\"\\} (\\d+)"))) return 0;
  return std::stoll(runs[1]);
}

struct SeqRequest {
  Tensor data, lengths;
  std::string body;
  int status = 0;
};

// Posts every request from its own client thread at once.
void post_all(const RunningServer& s, const std::string& model, std::vector<SeqRequest>& requests) {
  std::vector<std::thread> clients;
  for (SeqRequest& r : requests)
    clients.emplace_back([&s, &model, &r] {
      auto answer = s.client().Post("/v2/models/" + model + "/infer", r.body, "application/json");
      if (answer) r.status = answer->status, r.body = answer->body;
    });
  for (std::thread& t : clients) t.join();
}

TEST(ServePadding, DynamicSequencesOfDifferentLengthsShareABatch) {
  const fs::path dir = temp_dir();
  const std::string path = save_loop_model(dir);
  ServerOptions o;
  o.max_delay_us = 200000;  // the concurrent requests meet in one batch
  o.max_batch = 64;
  RunningServer s({path}, o);
  runtime::Session ref(path);
  manual_seed(62);
  std::vector<SeqRequest> requests;
  for (int i = 0; i < 10; ++i) {
    const int64_t rows = 1 + i % 2, steps = 2 + i;  // 2..11 steps, past the traced 7
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < rows; ++b) lens.push_back(1 + (i * 7 + b * 3) % steps);
    SeqRequest r{randn({rows, steps, 4}), lengths_of(lens), "", 0};
    r.body = tensors_body({{"x", r.data}, {"lengths", r.lengths}});
    requests.push_back(r);
  }
  const std::vector<SeqRequest> sent = requests;
  post_all(s, "seq", requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(requests[i].status, 200) << i << ": " << requests[i].body;
    const Tensors alone = ref.run(Tensors{sent[i].data, sent[i].lengths});
    Tensor got = response_output(requests[i].body, "logits");
    ASSERT_EQ(got.sizes().vec(), alone[0].sizes().vec()) << i;
    EXPECT_LE((got - alone[0]).abs().max().item<float>(), 1e-6f) << i;
    EXPECT_TRUE(equal(got.argmax(1), alone[0].argmax(1))) << i;
    // The per-step output is cut back to the request's own steps.
    Tensor steps = response_output(requests[i].body, "per_step");
    EXPECT_TRUE(equal(steps, alone[1])) << i << ": " << steps.sizes().vec().size();
  }
  EXPECT_LT(model_runs(s, "seq"), static_cast<int64_t>(requests.size())) << "the requests were not batched";
  fs::remove_all(dir);
}

// A zoo text classifier traced at 9 steps with a dynamic batch: tokens
// [batch, 9] and lengths [batch].
template <typename Model, typename Options>
std::string save_text_model(const fs::path& dir, const std::string& name, const Options& options,
                            std::shared_ptr<Model>& model) {
  model = std::make_shared<Model>(options);
  model->eval();
  jit::TraceOptions o;
  o.input_names = {"tokens", "lengths"};
  o.output_names = {"logits"};
  o.dynamic_dims = {{0, 0, "batch"}, {1, 0, "batch"}};
  jit::ModelFile f;
  Model& m = *model;
  f.graph = jit::trace(
      m, [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; },
      {randint(0, 30, {3, 9}), lengths_of({9, 4, 6})}, o);
  std::string path = (dir / (name + ".ember")).string();
  jit::save_model(f, path);
  return path;
}

// Requests of 1..9 tokens (padded to 9 by the server), batched together,
// against the request alone and the eager model on the unpadded tokens.
template <typename Model>
void check_fixed_length_model(const std::string& path, const std::string& name, Model& eager) {
  ServerOptions o;
  o.max_delay_us = 200000;
  o.max_batch = 64;
  RunningServer s({path}, o);
  runtime::Session ref(path);
  std::vector<SeqRequest> requests;
  for (int i = 0; i < 8; ++i) {
    const int64_t rows = 1 + i % 2, steps = 2 + i;  // 2..9 tokens
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < rows; ++b) lens.push_back(b == 0 ? steps : 1 + (i + b) % steps);
    SeqRequest r{randint(1, 30, {rows, steps}), lengths_of(lens), "", 0};
    r.body = tensors_body({{"tokens", r.data}, {"lengths", r.lengths}});
    requests.push_back(r);
  }
  const std::vector<SeqRequest> sent = requests;
  post_all(s, name, requests);
  NoGradGuard ng;
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(requests[i].status, 200) << name << " " << i << ": " << requests[i].body;
    Tensor got = response_output(requests[i].body, "logits");
    const Tensor& tokens = sent[i].data;
    Tensor padded = cat({tokens, zeros({tokens.size(0), 9 - tokens.size(1)}, TensorOptions().dtype(kInt64))}, 1);
    for (const Tensor& want : {ref.run(Tensors{padded, sent[i].lengths})[0], eager.forward(tokens, sent[i].lengths)}) {
      ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << name << " " << i;
      EXPECT_LE((got - want).abs().max().item<float>(), 1e-6f) << name << " " << i;
      EXPECT_TRUE(equal(got.argmax(1), want.argmax(1))) << name << " " << i;
    }
  }
  EXPECT_LT(model_runs(s, name), static_cast<int64_t>(requests.size())) << name << ": the requests were not batched";
  // Too many steps, and lengths past the request's own steps: 400s naming the field.
  struct Bad {
    Tensor tokens, lengths;
    std::string message;
  };
  for (const Bad& b : {Bad{randint(0, 30, {1, 10}), lengths_of({3}), "with 1 to 9 steps in dim 1, got [1, 10]"},
                       Bad{randint(0, 30, {2, 3}), lengths_of({3, 4}),
                           "inputs ('lengths').data[1]: expected a length in [1, 3] (dim 1 of 'tokens'), got 4"},
                       Bad{randint(0, 30, {1, 3}), lengths_of({0}), "expected a length in [1, 3]"}}) {
    auto r = s.client().Post("/v2/models/" + name + "/infer", tensors_body({{"tokens", b.tokens}, {"lengths", b.lengths}}),
                             "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find(b.message), std::string::npos) << r->body;
  }
}

TEST(ServePadding, ZooTextClassifiersTakeShorterSequencesPaddedToTheTracedLength) {
  const fs::path dir = temp_dir();
  manual_seed(63);
  for (std::string cell : {"lstm", "gru"}) {
    train::LSTMClassifierOptions o;
    o.vocab_size = 30, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    std::shared_ptr<train::LSTMClassifier> m;
    const std::string path = save_text_model(dir, cell, o, m);
    check_fixed_length_model(path, cell, *m);
  }
  train::TransformerClassifierOptions t;
  t.vocab_size = 30, t.d_model = 8, t.nhead = 2, t.num_layers = 2, t.dim_feedforward = 16, t.max_len = 16;
  t.num_classes = 3;
  std::shared_ptr<train::TransformerClassifier> m;
  const std::string path = save_text_model(dir, "transformer", t, m);
  check_fixed_length_model(path, "transformer", *m);
  fs::remove_all(dir);
}

TEST(ServePadding, StartupLogNamesThePadding) {
  const fs::path dir = temp_dir();
  Server s({save_loop_model(dir)}, {});
  EXPECT_NE(s.summary().find("sequences (dim 1) padded to the longest of a batch, lengths in 'lengths'"),
            std::string::npos)
      << s.summary();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember::serve

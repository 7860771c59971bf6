// POST /v1/models/NAME/predict: an image (raw body or multipart upload)
// through the model's recorded input transform, CSV rows, top-k class names
// with probabilities equal to softmax(Session::run) of the same input, and
// every 4xx path naming what is wrong and what the model expects.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "ember/data/image_preprocess.h"
#include "ember/ember.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"
#include "serve_test_util.h"

namespace ember::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::RunningServer;

const char* kTransform = R"({"kind":"image","channels":1,"size":[12,12],"mean":[0.5],"std":[0.25]})";

const char* kStandardize = R"({"kind":"standardize","mean":[1.0,-2.0,0.5],"std":[2.0,4.0,0.25]})";

// A 12x12 grey CNN with 5 classes ("cnn": with its input transform and class
// names; "bare": neither), a Linear(3, 4) for CSV rows ("rows", classes
// named) and a two-input model ("pair").
class PredictModels {
 public:
  PredictModels() : dir_(fs::temp_directory_path() / fmt::format("ember_serve_predict_{}", ::getpid())) {
    fs::create_directories(dir_);
    manual_seed(71);
    train::CNNOptions o;
    o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
    o.channels = {4, 8};
    o.hidden = 16;
    train::CNN cnn_model(o);
    cnn = save(cnn_model, "cnn", {randn({2, 1, 12, 12})}, {{"input_transform", kTransform},
                                                           {"class_names", "shirt,trouser,bag,coat,boot"}});
    bare = save(cnn_model, "bare", {randn({2, 1, 12, 12})}, {});
    nn::Linear lin(3, 4);
    rows = save(lin, "rows", {randn({2, 3})}, {{"class_names", "a,b,c,d"}});
    // The same layer for a CSV run that standardised its features.
    scaled = save(lin, "scaled", {randn({2, 3})}, {{"class_names", "a,b,c,d"}, {"input_transform", kStandardize}});
  }
  ~PredictModels() { fs::remove_all(dir_); }
  std::string cnn, bare, rows, scaled;
  fs::path dir() const { return dir_; }

 private:
  std::string save(nn::Module& m, const std::string& name, const std::vector<Tensor>& example,
                   std::map<std::string, std::string> source) {
    m.eval();
    jit::TraceOptions t;
    t.input_names = {"input"};
    t.output_names = {"logits"};
    t.dynamic_dims = {{0, 0, "batch"}};
    jit::ModelFile f;
    f.graph = jit::trace(m, example, t);
    f.source = std::move(source);
    std::string path = (dir_ / (name + ".ember")).string();
    jit::save_model(f, path);
    return path;
  }
  fs::path dir_;
};

const PredictModels& models() {
  static PredictModels files;
  return files;
}

// A 20x16 RGB PNG of a gradient, in memory (the transform makes it grey 12x12).
std::string png_bytes() {
  std::vector<uint8_t> pixels;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 20; ++x)
      for (int c = 0; c < 3; ++c) pixels.push_back(static_cast<uint8_t>((x * 12 + y * 7 + c * 40) % 256));
  std::string out;
  auto write = [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); };
  EXPECT_TRUE(stbi_write_png_to_func(write, &out, 20, 16, 3, pixels.data(), 20 * 3));
  return out;
}

// softmax(Session::run(x)) for row r, as the server should answer it.
std::vector<float> probabilities(const std::string& model, const Tensor& x, int64_t r) {
  runtime::Session s(model);
  return softmax(s.run(std::vector<Tensor>{x})[0], 1).select(0, r).contiguous().to_vector<float>();
}

// Checks one prediction's top list against the expected probabilities.
void expect_top(const json& prediction, const std::vector<float>& p, const std::vector<std::string>& names, size_t k) {
  const json& top = prediction.at("top");
  ASSERT_EQ(top.size(), k) << prediction;
  std::vector<size_t> order(p.size());
  for (size_t i = 0; i < p.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  for (size_t i = 0; i < k; ++i) {
    EXPECT_EQ(top[i].at("index"), order[i]) << prediction;
    EXPECT_EQ(top[i].at("class"), names[order[i]]) << prediction;
    EXPECT_NEAR(top[i].at("probability").get<double>(), p[order[i]], 1e-6) << prediction;
  }
}

TEST(ServePredict, ImageBodyGivesTopClassesWithProbabilities) {
  RunningServer s({models().cnn}, {});
  const std::string png = png_bytes();
  // What the run's evaluation does to the image, then the model.
  const fs::path file = models().dir() / "gradient.png";
  std::ofstream(file, std::ios::binary) << png;
  data::ImagePreprocess pre = data::ImagePreprocess::from_json(kTransform, "test");
  const std::vector<float> p = probabilities(models().cnn, pre.load(file.string()).unsqueeze(0), 0);
  const std::vector<std::string> names = {"shirt", "trouser", "bag", "coat", "boot"};
  httplib::Client c = s.client();
  auto r = c.Post("/v1/models/cnn/predict", png, "image/png");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j.at("model_name"), "cnn");
  EXPECT_EQ(j.at("kind"), "image");
  ASSERT_EQ(j.at("predictions").size(), 1u);
  expect_top(j["predictions"][0], p, names, 5);  // top_k 5 by default: every class here
  // ?top_k=2, and the same file as a multipart upload (curl -F file=@gradient.png).
  httplib::MultipartFormDataItems form = {{"file", png, "gradient.png", "image/png"}};
  r = c.Post("/v1/models/cnn/predict?top_k=2", form);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_top(json::parse(r->body).at("predictions").at(0), p, names, 2);
  // A top_k past the class count gives every class.
  r = c.Post("/v1/models/cnn/predict?top_k=50", png, "application/octet-stream");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_top(json::parse(r->body).at("predictions").at(0), p, names, 5);
}

TEST(ServePredict, CsvRowsAsEmberInferReadsThem) {
  RunningServer s({models().rows}, {});
  httplib::Client c = s.client();
  auto r = c.Post("/v1/models/rows/predict?top_k=3", "f1,f2,f3\n1,2,3\n\n-0.5, 4,1e-1\r\n", "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j.at("kind"), "csv");
  ASSERT_EQ(j.at("predictions").size(), 2u);
  Tensor x = tensor<float>({1, 2, 3, -0.5f, 4, 0.1f}, {2, 3});
  for (int64_t row = 0; row < 2; ++row)
    expect_top(j["predictions"][static_cast<size_t>(row)], probabilities(models().rows, x, row), {"a", "b", "c", "d"}, 3);
}

// A CSV run's model (input_transform of kind standardize) gets raw rows and
// standardises them as the run did: the answer is the graph's on (x - mean) / std.
TEST(ServePredict, CsvRowsAreStandardisedAsTheRunRecorded) {
  RunningServer s({models().scaled}, {});
  httplib::Client c = s.client();
  auto r = c.Post("/v1/models/scaled/predict?top_k=4", "3,2,1\n-1,-6,0.75\n", "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  ASSERT_EQ(j.at("predictions").size(), 2u);
  // (3 - 1) / 2, (2 + 2) / 4, (1 - 0.5) / 0.25 = 1, 1, 2; then -1, -1, 1.
  Tensor x = tensor<float>({1, 1, 2, -1, -1, 1}, {2, 3});
  for (int64_t row = 0; row < 2; ++row)
    expect_top(j["predictions"][static_cast<size_t>(row)], probabilities(models().scaled, x, row), {"a", "b", "c", "d"}, 4);
  auto bad = c.Post("/v1/models/scaled/predict", "1,2\n", "text/csv");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("2 values per row, but model 'scaled' standardises 3 features"), std::string::npos) << bad->body;
}

struct PredictError {
  std::string model, body, content_type;
  int status;
  std::string message;
};

TEST(ServePredict, BadUploadsAnswer4xxNamingWhatTheModelTakes) {
  RunningServer s({models().cnn, models().bare, models().rows}, {});
  httplib::Client c = s.client();
  const std::string png = png_bytes();
  const std::vector<PredictError> cases = {
      {"bare", png, "image/png", 400, "model 'bare' records no input transform (source key input_transform"},
      {"cnn", png.substr(0, 60), "image/png", 400, "the body is not an image this model can take"},
      {"cnn", "\x89PNG\r\n\x1a\n garbage", "", 400, "cannot decode"},
      {"cnn", "", "image/png", 400, "the body is empty"},
      {"rows", "1,2\n", "text/csv", 400,
       "predict: the body (CSV): 2 values per sample, but input 'input' ([-1, 3] (float32[batch, 3])) takes 3"},
      {"rows", "1,2,3\n4,x,6\n", "text/csv", 400, "predict: CSV body:2: cell 2 ('x') is not a number"},
      {"rows", "1,2,3\n4,5\n", "text/csv", 400, "CSV body:2: 2 cells, the first row has 3"},
      {"rows", "a,b,c\n", "text/csv", 400, "no rows of numbers; expected rows of numbers separated by commas, 3 per row"},
      {"rows", R"({"inputs":[]})", "application/json", 415, "v2 JSON tensors go to /v2/models/rows/infer"},
      {"cnn", "1,2,3\n", "text/csv", 400, "3 values per sample, but input 'input' ([-1, 1, 12, 12]"},
      {"nope", "1,2,3\n", "text/csv", 404, "unknown model 'nope'"},
  };
  for (const PredictError& e : cases) {
    auto r = c.Post("/v1/models/" + e.model + "/predict", e.body, e.content_type.c_str());
    ASSERT_TRUE(r) << e.message;
    EXPECT_EQ(r->status, e.status) << e.message << " -> " << r->body;
    json answer = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(answer.is_object() && answer.contains("error")) << r->body;
    EXPECT_NE(answer["error"].get<std::string>().find(e.message), std::string::npos) << r->body;
  }
  for (const char* k : {"0", "-1", "x", "99999999999"}) {
    auto r = c.Post(std::string("/v1/models/rows/predict?top_k=") + k, "1,2,3\n", "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << k;
    EXPECT_NE(r->body.find("top_k: expected an integer of at least 1"), std::string::npos) << r->body;
  }
  httplib::MultipartFormDataItems no_file = {{"note", "hello", "", ""}};
  auto r = c.Post("/v1/models/cnn/predict", no_file);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;  // the one part is the upload, named by its field
  EXPECT_NE(r->body.find("predict: CSV form field 'note': no rows of numbers"), std::string::npos) << r->body;
  // Still serving.
  r = c.Post("/v1/models/rows/predict", "1,2,3\n", "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

}  // namespace
}  // namespace ember::serve

// `ember export` and `ember inspect` end to end on a short training run, and
// `ember infer` on an image file through the transform the export recorded.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/data/datasets/csv.h"
#include "ember/data/datasets/idx.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "cli_util.h"

namespace {

namespace fs = std::filesystem;

using Result = ember::testing::CliResult;
using ember::testing::contains;
using ember::testing::run_cli;

class CliExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / fmt::format("ember_cli_export_{}", ::getpid());
    fs::remove_all(root_);
    std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
    Result r = run_cli("train " + cfg +
                         " model.channels=[4,8] model.hidden=16 data.limit_train=256 data.limit_test=96 "
                         "data.batch_size=32 train.epochs=1 train.threads=2 log.root=" +
                         root_.string() + " log.name=exp");
    ASSERT_EQ(r.code, 0) << r.output;
    run_ = fs::directory_iterator(root_)->path();
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static fs::path root_, run_;
};
fs::path CliExport::root_, CliExport::run_;

TEST_F(CliExport, ExportVerifiesWritesAndInspectShowsTheModel) {
  Result e = run_cli("export " + run_.string() + " --optimize 0");
  ASSERT_EQ(e.code, 0) << e.output;
  // Every case bit for bit: the example batch, random inputs like it, the next test batch.
  for (const char* c : {"example", "random", "test batch 1"})
    EXPECT_TRUE(contains(e.output, fmt::format("verify {} [32, 1, 28, 28]: output: max abs diff 0, max rel diff 0 "
                                               "(bitwise equal)\n", c)))
        << c << "\n" << e.output;
  EXPECT_FALSE(contains(e.output, "verify batch=")) << "a fixed batch has no other size\n" << e.output;
  EXPECT_TRUE(contains(e.output, "verified bitwise against eager on 3 cases (example, random, test batch 1)"))
      << e.output;
  const fs::path model = run_ / "model.ember";
  ASSERT_TRUE(fs::exists(model));

  // The file stands on its own: the graph runs without the training stack.
  ember::jit::ModelFile m = ember::jit::load_model(model.string());
  EXPECT_EQ(m.source.at("model"), "cnn");
  EXPECT_EQ(m.source.at("run_dir"), fs::absolute(run_).lexically_normal().string());
  EXPECT_TRUE(contains(m.source.at("checkpoint"), "best.ckpt"));
  EXPECT_EQ(m.source.at("config_hash").size(), 16u);
  // Fashion-MNIST's evaluation transform: grey 28 x 28, ToTensor, Normalize(0.286, 0.353).
  EXPECT_EQ(m.source.at("input_transform"),
            R"({"kind":"image","channels":1,"size":[28,28],"mean":[0.286],"std":[0.353]})");
  ASSERT_EQ(m.graph.inputs.size(), 1u);
  EXPECT_EQ(m.graph.type(m.graph.inputs[0].value).str(), "float32[32, 1, 28, 28]");
  ember::Tensor out = ember::jit::run(m.graph, {ember::randn({32, 1, 28, 28})})[0];
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{32, 10}));

  Result i = run_cli("inspect " + model.string());
  ASSERT_EQ(i.code, 0) << i.output;
  for (const char* s : {"format version 3", "input: float32[32, 1, 28, 28]", "output: float32[32, 10]", "conv2d",
                        "batch_norm_apply", "matmul", "parameters:", "FLOPs per sample", "run_dir:", "config_hash:",
                        "model: cnn"})
    EXPECT_TRUE(contains(i.output, s)) << s << "\n" << i.output;
}

// The line of `text` that starts with `prefix` ("" when none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

TEST_F(CliExport, OptimizeLevelsVerifyWithinToleranceAndInspectShowsThePasses) {
  std::string flops_line;
  for (int level : {1, 2}) {
    const fs::path out = root_ / fmt::format("o{}.ember", level);
    Result e = run_cli(fmt::format("export {} --optimize {} -o {}", run_.string(), level, out.string()));
    ASSERT_EQ(e.code, 0) << e.output;
    EXPECT_TRUE(contains(e.output, fmt::format("(optimize level {})", level))) << e.output;
    EXPECT_TRUE(contains(e.output, "verified against eager (rtol 1e-5, atol 1e-6)")) << e.output;
    ember::jit::ModelFile m = ember::jit::load_model(out.string());
    EXPECT_EQ(m.source.at("optimize"), std::to_string(level));
    int64_t bn = 0, relu = 0;
    for (const ember::jit::Node& n : m.graph.nodes) bn += n.kind == "batch_norm_apply", relu += n.kind == "relu";
    EXPECT_EQ(bn, 0) << "BatchNorm folded into the convs";
    EXPECT_EQ(relu == 0, level == 2) << "relu fused at level 2 only";
    Result i = run_cli("inspect " + out.string());
    ASSERT_EQ(i.code, 0) << i.output;
    EXPECT_TRUE(contains(i.output, fmt::format("passes (optimize level {}): eliminate_dead_code", level))) << i.output;
    EXPECT_TRUE(contains(i.output, "fold_batch_norm")) << i.output;
    EXPECT_EQ(contains(i.output, "fuse_activations"), level == 2) << i.output;
    EXPECT_EQ(contains(i.output, "fuse_pooling"), level == 2) << i.output;
    EXPECT_TRUE(contains(i.output, "memory plan (traced sizes): ")) << i.output;
    // A conv that pools (level 2) still counts its full convolution.
    const std::string f = line_starting(i.output, "FLOPs per sample");
    ASSERT_FALSE(f.empty()) << i.output;
    if (level == 1) flops_line = f;
    else EXPECT_EQ(f, flops_line);
  }
  EXPECT_EQ(run_cli("export " + run_.string() + " --optimize 3").code, 2);
}

TEST_F(CliExport, LastCheckpointAndOutputPath) {
  const fs::path out = root_ / "last.ember";
  Result e = run_cli("export " + run_.string() + " --checkpoint last -o " + out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(contains(ember::jit::load_model(out.string()).source.at("checkpoint"), "last.ckpt"));
  // A checkpoint file works as the target too.
  Result c = run_cli("export " + (run_ / "best.ckpt").string() + " -o " + (root_ / "b.ember").string());
  EXPECT_EQ(c.code, 0) << c.output;
}

TEST_F(CliExport, DynamicBatchRunsAtAnyBatchSize) {
  const fs::path out = root_ / "dyn.ember";
  Result e = run_cli("export " + run_.string() + " --dynamic batch --optimize 2 -o " + out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  // The traced batch is 32; 35 is a size the tracer never probed.
  EXPECT_TRUE(contains(e.output, "verify batch=35 [35, 1, 28, 28]: output: max abs diff")) << e.output;
  EXPECT_TRUE(contains(e.output, "on 4 cases (example, batch=35, random, test batch 1)")) << e.output;
  EXPECT_FALSE(contains(e.output, "OUT OF TOLERANCE")) << e.output;
  ember::jit::ModelFile m = ember::jit::load_model(out.string());
  EXPECT_EQ(m.graph.type(m.graph.inputs[0].value).str(), "float32[batch=32, 1, 28, 28]");
  for (int64_t b : {1, 5, 64}) {
    ember::Tensor y = ember::jit::run(m.graph, {ember::randn({b, 1, 28, 28})})[0];
    EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{b, 10}));
  }
  Result i = run_cli("inspect " + out.string());
  EXPECT_TRUE(contains(i.output, "input: float32[batch=32, 1, 28, 28]")) << i.output;
  EXPECT_EQ(run_cli("export " + run_.string() + " --dynamic seq").code, 2);
}

// A test image written as a PNG gives through `ember infer` what the graph
// gives for the image normalised by hand.
TEST_F(CliExport, InferOnAnImageFileAppliesTheRecordedTransform) {
  const fs::path model = root_ / "img.ember";
  ASSERT_EQ(run_cli("export " + run_.string() + " -o " + model.string()).code, 0);
  ember::data::FashionMNIST test(ember::data::kDebianFashionMnistRoot, false);
  const std::vector<uint8_t> px = test.images().select(0, 7).contiguous().to_vector<uint8_t>();
  const fs::path png = root_ / "seven.png";
  ASSERT_TRUE(stbi_write_png(png.string().c_str(), 28, 28, 1, px.data(), 28));
  Result r = run_cli(fmt::format("infer {} {} -o {}", model.string(), png.string(), (root_ / "img.csv").string()));
  ASSERT_EQ(r.code, 0) << r.output;

  std::vector<float> x(32 * 28 * 28, 0.0f);  // the graph's fixed batch of 32; the image in row 0
  for (size_t i = 0; i < px.size(); ++i) x[i] = (static_cast<float>(px[i]) / 255.0f - 0.286f) / 0.353f;
  ember::jit::ModelFile m = ember::jit::load_model(model.string());
  const std::vector<float> y = ember::jit::run(m.graph, {ember::tensor<float>(x, {32, 1, 28, 28})})[0]
                                   .narrow(0, 0, 1).contiguous().to_vector<float>();
  size_t best = 0;
  for (size_t c = 1; c < y.size(); ++c) best = y[c] > y[best] ? c : best;
  const std::vector<std::string> classes = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                            "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  EXPECT_TRUE(contains(r.output, "0: " + classes[best] + "  (seven.png)\n")) << r.output;
  std::ifstream f(root_ / "img.csv");
  std::string header, row;
  std::getline(f, header);
  std::getline(f, row);
  std::vector<std::string> cells;
  std::stringstream ss(row);
  for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
  ASSERT_EQ(cells.size(), 3 + y.size()) << row;
  EXPECT_EQ(cells[1], std::to_string(best));
  for (size_t c = 0; c < y.size(); ++c) EXPECT_NEAR(std::stod(cells[3 + c]), y[c], 1e-5) << c;
}

TEST_F(CliExport, ErrorsAndExitCodes) {
  Result missing = run_cli("export /nonexistent/run");
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "does not exist")) << missing.output;
  EXPECT_EQ(run_cli("export " + run_.string() + " --checkpoint middle").code, 2);
  EXPECT_EQ(run_cli("inspect").code, 2);
  // A truncated model file: inspect fails naming the file.
  const fs::path bad = root_ / "cut.ember";
  ASSERT_EQ(run_cli("export " + run_.string() + " -o " + bad.string()).code, 0);
  fs::resize_file(bad, fs::file_size(bad) / 2);
  Result i = run_cli("inspect " + bad.string());
  EXPECT_EQ(i.code, 1) << i.output;
  EXPECT_TRUE(contains(i.output, bad.string())) << i.output;
}

}  // namespace

// A text run exported with both dims dynamic: one file for any batch size
// and padded length, verified at sizes the tracer never probed.
TEST(CliExportText, LstmRunExportsWithDynamicBatchAndSequence) {
  const fs::path root = fs::temp_directory_path() / fmt::format("ember_cli_export_text_{}", ::getpid());
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/reviews_lstm.yaml";
  Result r = run_cli("train " + cfg +
                       " model.embed_dim=8 model.hidden=8 data.train_file=" + EMBER_SOURCE_DIR +
                       "/data/text/reviews_train.tsv data.test_file=" + EMBER_SOURCE_DIR +
                       "/data/text/reviews_test.tsv data.limit_train=256 data.limit_test=64 train.epochs=1 "
                       "train.threads=2 log.root=" + root.string() + " log.name=text");
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path run = fs::directory_iterator(root)->path();
  const fs::path out = root / "text.ember";
  Result e = run_cli("export " + run.string() + " --dynamic batch,seq --optimize 2 -o " + out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(contains(e.output, "verify seq=")) << e.output;
  EXPECT_TRUE(contains(e.output, "verify batch=")) << e.output;
  EXPECT_FALSE(contains(e.output, "OUT OF TOLERANCE")) << e.output;
  ember::jit::ModelFile m = ember::jit::load_model(out.string());
  const std::string tokens = m.graph.type(m.graph.inputs[0].value).str();
  EXPECT_TRUE(contains(tokens, "int64[batch=32, seq=")) << tokens;
  EXPECT_EQ(m.graph.type(m.graph.inputs[1].value).str(), "int64[batch=32]");
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 40}}) {
    std::vector<int64_t> lens(static_cast<size_t>(b), t);
    ember::Tensor y = ember::jit::run(m.graph, {ember::randint(0, 5, {b, t}), ember::tensor<int64_t>(lens, {b})})[0];
    EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{b, 2}));
  }
  Result i = run_cli("inspect " + out.string());
  EXPECT_TRUE(contains(i.output, "  rnn_layer ")) << i.output;
  EXPECT_TRUE(contains(i.output, "FLOPs per sample (matmul, conv, recurrent layers): ")) << i.output;
  Result bad = run_cli("export " + run.string() + " --dynamic batch,width");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--dynamic takes batch, seq or batch,seq; got 'width'")) << bad.output;
  fs::remove_all(root);
}

// A CSV run records the standardisation fitted on its training rows, and
// `ember infer` applies it to raw CSV rows: its outputs are the graph's on
// (x - mean) / std with the population statistics of those rows.
TEST(CliExportCsv, InferStandardisesCsvRowsAsTheRunDid) {
  const fs::path root = fs::temp_directory_path() / fmt::format("ember_cli_export_csv_{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  // Features on very different scales: a in [0, 100), b in [-1, 1); label a > 50.
  std::vector<std::array<double, 2>> rows;
  uint64_t s = 7;
  auto next = [&s] { s = s * 6364136223846793005ULL + 1442695040888963407ULL; return static_cast<double>(s >> 11) / 9007199254740992.0; };
  auto write = [&](const fs::path& path, int n, bool label) {
    std::ofstream f(path);
    f << (label ? "a,b,label\n" : "a,b\n");
    for (int i = 0; i < n; ++i) {
      const double a = std::floor(next() * 1000) / 10, b = std::floor(next() * 200 - 100) / 100;
      // The CSV reader parses float32: the statistics are of those values.
      if (label) rows.push_back({static_cast<float>(a), static_cast<float>(b)});
      f << a << "," << b << (label ? (a > 50 ? ",pos" : ",neg") : "") << "\n";
    }
  };
  write(root / "train.csv", 200, true);
  const std::vector<std::array<double, 2>> train_rows = rows;
  write(root / "test.csv", 40, true);
  write(root / "raw.csv", 5, false);
  std::ofstream(root / "csv.yaml") << "model:\n  name: mlp\n";
  Result r = run_cli("train " + (root / "csv.yaml").string() + " model.hidden=[8] data.dataset=csv data.label_column=label data.val_fraction=0 "
                       "data.train_file=" + (root / "train.csv").string() + " data.test_file=" +
                       (root / "test.csv").string() + " data.batch_size=20 train.epochs=1 train.threads=2 log.root=" +
                       root.string() + " log.name=csv");
  ASSERT_EQ(r.code, 0) << r.output;
  fs::path run;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) run = e.path();
  const fs::path model = root / "csv.ember";
  Result e = run_cli("export " + run.string() + " --dynamic batch -o " + model.string());
  ASSERT_EQ(e.code, 0) << e.output;
  ember::jit::ModelFile m = ember::jit::load_model(model.string());
  const ember::data::Standardizer st = ember::data::Standardizer::from_json(m.source.at("input_transform"), "test");
  for (int j = 0; j < 2; ++j) {  // population statistics of the training rows, as float32
    double mean = 0, ss = 0;
    for (const auto& row : train_rows) mean += row[static_cast<size_t>(j)];
    mean /= static_cast<double>(train_rows.size());
    for (const auto& row : train_rows) ss += (row[static_cast<size_t>(j)] - mean) * (row[static_cast<size_t>(j)] - mean);
    EXPECT_EQ(st.mean.to_vector<float>()[static_cast<size_t>(j)], static_cast<float>(mean));
    EXPECT_EQ(st.std.to_vector<float>()[static_cast<size_t>(j)],
              static_cast<float>(std::sqrt(ss / static_cast<double>(train_rows.size()))));
  }
  const fs::path preds = root / "preds.csv";
  Result i = run_cli("infer " + model.string() + " " + (root / "raw.csv").string() + " -o " + preds.string());
  ASSERT_EQ(i.code, 0) << i.output;
  // The graph on the rows standardised by hand.
  std::ifstream raw(root / "raw.csv");
  std::string line;
  std::getline(raw, line);  // header
  std::vector<float> x;
  while (std::getline(raw, line)) {
    const size_t comma = line.find(',');
    x.push_back(std::stof(line.substr(0, comma)));
    x.push_back(std::stof(line.substr(comma + 1)));
  }
  ember::Tensor xs = (ember::tensor<float>(x, {5, 2}) - st.mean) / st.std;
  ember::Tensor y = ember::jit::run(m.graph, {xs.contiguous()})[0];
  std::ifstream p(preds);
  std::getline(p, line);
  EXPECT_EQ(line, "index,prediction,class,out0,out1");
  const std::vector<float> yv = y.contiguous().to_vector<float>();
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(std::getline(p, line));
    const std::string want = fmt::format("{},{}", yv[static_cast<size_t>(2 * k)], yv[static_cast<size_t>(2 * k + 1)]);
    EXPECT_TRUE(line.size() >= want.size() && line.substr(line.size() - want.size()) == want) << line << " vs " << want;
  }
  fs::remove_all(root);
}

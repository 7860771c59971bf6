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
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/data/datasets/idx.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;  // stdout + stderr
};

Result ember_cli(const std::string& args) {
  std::string cmd = std::string(EMBER_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class CliExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / fmt::format("ember_cli_export_{}", ::getpid());
    fs::remove_all(root_);
    std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
    Result r = ember_cli("train " + cfg +
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
  Result e = ember_cli("export " + run_.string() + " --optimize 0");
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

  Result i = ember_cli("inspect " + model.string());
  ASSERT_EQ(i.code, 0) << i.output;
  for (const char* s : {"format version 1", "input: float32[32, 1, 28, 28]", "output: float32[32, 10]", "conv2d",
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
    Result e = ember_cli(fmt::format("export {} --optimize {} -o {}", run_.string(), level, out.string()));
    ASSERT_EQ(e.code, 0) << e.output;
    EXPECT_TRUE(contains(e.output, fmt::format("(optimize level {})", level))) << e.output;
    EXPECT_TRUE(contains(e.output, "verified against eager (rtol 1e-5, atol 1e-6)")) << e.output;
    ember::jit::ModelFile m = ember::jit::load_model(out.string());
    EXPECT_EQ(m.source.at("optimize"), std::to_string(level));
    int64_t bn = 0, relu = 0;
    for (const ember::jit::Node& n : m.graph.nodes) bn += n.kind == "batch_norm_apply", relu += n.kind == "relu";
    EXPECT_EQ(bn, 0) << "BatchNorm folded into the convs";
    EXPECT_EQ(relu == 0, level == 2) << "relu fused at level 2 only";
    Result i = ember_cli("inspect " + out.string());
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
  EXPECT_EQ(ember_cli("export " + run_.string() + " --optimize 3").code, 2);
}

TEST_F(CliExport, LastCheckpointAndOutputPath) {
  const fs::path out = root_ / "last.ember";
  Result e = ember_cli("export " + run_.string() + " --checkpoint last -o " + out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(contains(ember::jit::load_model(out.string()).source.at("checkpoint"), "last.ckpt"));
  // A checkpoint file works as the target too.
  Result c = ember_cli("export " + (run_ / "best.ckpt").string() + " -o " + (root_ / "b.ember").string());
  EXPECT_EQ(c.code, 0) << c.output;
}

TEST_F(CliExport, DynamicBatchRunsAtAnyBatchSize) {
  const fs::path out = root_ / "dyn.ember";
  Result e = ember_cli("export " + run_.string() + " --dynamic batch --optimize 2 -o " + out.string());
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
  Result i = ember_cli("inspect " + out.string());
  EXPECT_TRUE(contains(i.output, "input: float32[batch=32, 1, 28, 28]")) << i.output;
  EXPECT_EQ(ember_cli("export " + run_.string() + " --dynamic seq").code, 2);
}

// A test image written as a PNG gives through `ember infer` what the graph
// gives for the image normalised by hand.
TEST_F(CliExport, InferOnAnImageFileAppliesTheRecordedTransform) {
  const fs::path model = root_ / "img.ember";
  ASSERT_EQ(ember_cli("export " + run_.string() + " -o " + model.string()).code, 0);
  ember::data::FashionMNIST test(ember::data::kDebianFashionMnistRoot, false);
  const std::vector<uint8_t> px = test.images().select(0, 7).contiguous().to_vector<uint8_t>();
  const fs::path png = root_ / "seven.png";
  ASSERT_TRUE(stbi_write_png(png.string().c_str(), 28, 28, 1, px.data(), 28));
  Result r = ember_cli(fmt::format("infer {} {} -o {}", model.string(), png.string(), (root_ / "img.csv").string()));
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
  Result missing = ember_cli("export /nonexistent/run");
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "does not exist")) << missing.output;
  EXPECT_EQ(ember_cli("export " + run_.string() + " --checkpoint middle").code, 2);
  EXPECT_EQ(ember_cli("inspect").code, 2);
  // A truncated model file: inspect fails naming the file.
  const fs::path bad = root_ / "cut.ember";
  ASSERT_EQ(ember_cli("export " + run_.string() + " -o " + bad.string()).code, 0);
  fs::resize_file(bad, fs::file_size(bad) / 2);
  Result i = ember_cli("inspect " + bad.string());
  EXPECT_EQ(i.code, 1) << i.output;
  EXPECT_TRUE(contains(i.output, bad.string())) << i.output;
}

}  // namespace

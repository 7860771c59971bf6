// `ember export RUN --quantize dynamic|static` end to end on short MLP and
// CNN training runs: accuracies of float and int8 on the test split, file
// sizes, speedup, the int8 layers, the loaded file's int8 nodes, and the
// failure when the accuracy drop passes --max-accuracy-drop.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "cli_util.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"

namespace {

namespace fs = std::filesystem;

using Result = ember::testing::CliResult;
using ember::testing::contains;
using ember::testing::run_cli;

class CliQuantize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("ember_cli_quantize_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
    Result r = run_cli("train " + cfg +
                         " model.hidden=[64] data.limit_train=512 data.limit_test=200 data.batch_size=50 "
                         "train.epochs=1 train.threads=2 log.root=" +
                         root_.string() + " log.name=q");
    ASSERT_EQ(r.code, 0) << r.output;
    run_ = fs::directory_iterator(root_)->path();
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static fs::path root_, run_;
};
fs::path CliQuantize::root_, CliQuantize::run_;

TEST_F(CliQuantize, DynamicReportsAccuracySizesAndSpeedup) {
  const fs::path out = root_ / "q.ember";
  Result e = run_cli("export " + run_.string() + " --dynamic batch --quantize dynamic -o " + out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  std::smatch m;
  const std::string& o = e.output;
  ASSERT_TRUE(std::regex_search(o, m, std::regex(R"(accuracy \(test, 200 samples\): float ([0-9.]+)%, int8 ([0-9.]+)%, drop (-?[0-9.]+) points \(limit 1.00\))")))
      << o;
  const double f = std::stod(m[1]), q = std::stod(m[2]), drop = std::stod(m[3]);
  EXPECT_NEAR(f - q, drop, 0.011);
  EXPECT_GT(f, 30.0) << "the short run learned something";
  ASSERT_TRUE(std::regex_search(o, m, std::regex(R"(file size: float ([0-9.]+) MiB, int8 ([0-9.]+) MiB \(([0-9.]+)x\))")))
      << o;
  // 784*64 + 64*10 weights: int8 plus per-channel scales is about a quarter.
  EXPECT_LT(std::stod(m[3]), 0.35);
  EXPECT_TRUE(std::regex_search(o, std::regex(R"(float [0-9.]+ s, int8 [0-9.]+ s, speedup [0-9.]+x)"))) << o;
  EXPECT_TRUE(contains(o, "quantize quantized to int8 (2):")) << o;
  EXPECT_TRUE(contains(o, "quantize kept in float (0):")) << o;
  EXPECT_TRUE(contains(o, "2 int8 layers, 0 kept in float")) << o;
  ember::jit::ModelFile file = ember::jit::load_model(out.string());
  EXPECT_EQ(file.format_version, ember::jit::kModelFormatVersion);
  int64_t int8_nodes = 0, matmuls = 0;
  for (const ember::jit::Node& n : file.graph.nodes)
    int8_nodes += n.kind == "linear_dynamic_int8", matmuls += n.kind == "matmul";
  EXPECT_EQ(int8_nodes, 2);
  EXPECT_EQ(matmuls, 0);
  EXPECT_TRUE(contains(file.source.at("quantize"), "dynamic int8"));
  // The runtime and `ember inspect` read it.
  Result i = run_cli("inspect " + out.string());
  EXPECT_EQ(i.code, 0) << i.output;
  EXPECT_TRUE(contains(i.output, "linear_dynamic_int8")) << i.output;
}

TEST_F(CliQuantize, AccuracyDropOverTheLimitFails) {
  // A negative limit demands int8 beat float by 100 points: never met.
  Result e = run_cli("export " + run_.string() + " --dynamic batch --quantize dynamic --max-accuracy-drop -100 -o " +
                       (root_ / "fail.ember").string());
  EXPECT_EQ(e.code, 1) << e.output;
  EXPECT_TRUE(contains(e.output, "wrote (accuracy FAILED)")) << e.output;
  EXPECT_TRUE(contains(e.output, "more than --max-accuracy-drop -100.00")) << e.output;
}

TEST_F(CliQuantize, StaticOnAnMlpQuantizesTheSignedInput) {
  const fs::path out = root_ / "s.ember";
  Result e = run_cli("export " + run_.string() + " --dynamic batch --quantize static --calibration-batches 4 -o " +
                     out.string());
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(contains(e.output, "calibrated on 4 training batches (observer minmax)")) << e.output;
  EXPECT_TRUE(contains(e.output, "2 int8 layers, 0 kept in float")) << e.output;
  ember::jit::ModelFile file = ember::jit::load_model(out.string());
  std::map<std::string, int> kinds;
  for (const ember::jit::Node& n : file.graph.nodes) ++kinds[n.kind];
  EXPECT_EQ(kinds["linear_int8"], 2);
  EXPECT_EQ(kinds["quantize_static"], 1);
  EXPECT_EQ(kinds["matmul"], 0);
  // Standardized pixels are signed: the input quantizes to int8; the hidden ReLU output passes as uint8.
  int uint8_values = 0;
  for (const ember::jit::Value& v : file.graph.values) uint8_values += v.type.dtype == ember::kUInt8;
  EXPECT_EQ(uint8_values, 1);
  for (const ember::jit::Node& n : file.graph.nodes) {
    if (n.kind == "quantize_static") {
      EXPECT_EQ(file.graph.type(n.outputs[0]).dtype, ember::kInt8);
    }
  }
  EXPECT_TRUE(contains(file.source.at("quantize"), "static int8")) << file.source.at("quantize");
}

TEST_F(CliQuantize, StaticRejectsAnUnknownObserver) {
  Result e = run_cli("export " + run_.string() + " --quantize static --observer median -o " + (root_ / "o.ember").string());
  EXPECT_NE(e.code, 0);
  EXPECT_TRUE(contains(e.output, "median")) << e.output;
  EXPECT_TRUE(contains(e.output, "histogram")) << e.output;
}

// W1's CNN: both convs and both linears int8, uint8 between them, the accuracy
// within a point of float after a short run (the issue's 0.5-point target is
// measured on the full run, see bench/README.md).
TEST(CliQuantizeCnn, StaticConvNetKeepsItsAccuracy) {
  const fs::path root = fs::temp_directory_path() / ("ember_cli_qcnn_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
  Result r = run_cli("train " + cfg +
                     " data.limit_train=1024 data.limit_test=500 data.batch_size=50 train.epochs=1 train.threads=2 "
                     "log.root=" + root.string() + " log.name=c");
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path run = fs::directory_iterator(root)->path();
  for (const char* observer : {"minmax", "histogram"}) {
    SCOPED_TRACE(observer);
    const fs::path out = root / (std::string(observer) + ".ember");
    Result e = run_cli("export " + run.string() + " --dynamic batch --quantize static --calibration-batches 8 --observer " +
                       observer + " --max-accuracy-drop 1.0 -o " + out.string());
    ASSERT_EQ(e.code, 0) << e.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(e.output, m, std::regex(R"(float ([0-9.]+)%, int8 ([0-9.]+)%)"))) << e.output;
    EXPECT_GT(std::stod(m[1]), 50.0) << "the short run learned something";
    EXPECT_TRUE(contains(e.output, "4 int8 layers, 0 kept in float")) << e.output;
    ASSERT_TRUE(std::regex_search(e.output, m, std::regex(R"(int8 [0-9.]+ MiB \(([0-9.]+)x\))"))) << e.output;
    EXPECT_LT(std::stod(m[1]), 0.3) << "int8 weights and per-channel scales";
    ember::jit::ModelFile file = ember::jit::load_model(out.string());
    std::map<std::string, int> kinds;
    for (const ember::jit::Node& n : file.graph.nodes) ++kinds[n.kind];
    EXPECT_EQ(kinds["conv2d_int8"], 2);
    EXPECT_EQ(kinds["linear_int8"], 2);
    EXPECT_EQ(kinds["quantize_static"], 1) << "float only at the input";
    EXPECT_EQ(kinds["conv2d"] + kinds["matmul"], 0);
  }
  // A layer kept float by its module path (the zoo CNN is a Sequential: the first conv is "0") is listed.
  Result k = run_cli("export " + run.string() + " --dynamic batch --quantize static --calibration-batches 2 "
                     "--keep-float 0 -o " + (root / "k.ember").string());
  EXPECT_EQ(k.code, 0) << k.output;
  EXPECT_TRUE(contains(k.output, "0: kept float as asked (keep_float)")) << k.output;
  EXPECT_TRUE(contains(k.output, "3 int8 layers, 1 kept in float")) << k.output;
  fs::remove_all(root);
}

}  // namespace

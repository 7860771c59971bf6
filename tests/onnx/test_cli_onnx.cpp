// `ember export --format onnx`, `ember inspect` and `ember infer` on .onnx
// files end to end, on a short training run.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "cli_util.h"
#include "ember/ember.h"
#include "ember/io/npy.h"

namespace {

namespace fs = std::filesystem;

using Result = ember::testing::CliResult;
using ember::testing::contains;
using ember::testing::run_cli;

// The "N: label" prediction lines of `ember infer`.
std::string predictions(const std::string& out) {
  std::string lines;
  std::regex line("^[0-9]+: .*$", std::regex::multiline);
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    lines += it->str() + "\n";
  return lines;
}

TEST(CliOnnx, ExportInspectAndInferAnOnnxFile) {
  const fs::path root = fs::temp_directory_path() / fmt::format("ember_cli_onnx_{}", ::getpid());
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
  Result t = run_cli("train " + cfg +
                       " model.channels=[4,8] model.hidden=16 data.limit_train=256 data.limit_test=96 "
                       "data.batch_size=32 train.epochs=1 train.threads=2 log.root=" + root.string() + " log.name=exp");
  ASSERT_EQ(t.code, 0) << t.output;
  const fs::path run = fs::directory_iterator(root)->path();

  Result e = run_cli("export " + run.string() + " --format onnx --opset 13 --dynamic batch");
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(contains(e.output, "verify test batch 0: output: max abs diff")) << e.output;
  EXPECT_TRUE(contains(e.output, "verify test batch 1: output: max abs diff")) << e.output;
  EXPECT_TRUE(contains(e.output, "ONNX opset 13")) << e.output;
  EXPECT_TRUE(contains(e.output, "passed ONNX's checker (full) and shape inference, verified by Ember's ONNX "
                                 "importer against eager (rtol 1e-5, atol 1e-6) on test batch 0, test batch 1"))
      << e.output;
  const fs::path onnx_path = run / "model.onnx";
  ASSERT_TRUE(fs::exists(onnx_path));
  {
    std::ifstream f(onnx_path, std::ios::binary);
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromIstream(&f));
    EXPECT_EQ(m.opset_import(0).version(), 13);
    EXPECT_EQ(m.graph().input(0).name(), "input");
    EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
    std::map<std::string, std::string> meta;
    for (const auto& kv : m.metadata_props()) meta[kv.key()] = kv.value();
    EXPECT_EQ(meta["model"], "cnn");
    EXPECT_TRUE(contains(meta["class_names"], "Bag")) << meta["class_names"];
  }

  Result i = run_cli("inspect " + onnx_path.string());
  ASSERT_EQ(i.code, 0) << i.output;
  EXPECT_TRUE(contains(i.output, "ONNX model, opset 13")) << i.output;
  EXPECT_TRUE(contains(i.output, "  input: float32[batch=1, 1, 28, 28]\n")) << i.output;
  EXPECT_TRUE(std::regex_search(i.output, std::regex("  Conv +2\n"))) << i.output;

  // The same predictions from the .ember and the .onnx export of the run.
  ASSERT_EQ(run_cli("export " + run.string() + " --dynamic batch --no-verify").code, 0);
  ember::manual_seed(3);
  const fs::path x = root / "x.npy";
  ember::io::save_npy(x.string(), ember::randn({12, 1, 28, 28}));
  Result a = run_cli("infer " + (run / "model.ember").string() + " " + x.string());
  Result b = run_cli("infer " + onnx_path.string() + " " + x.string());
  ASSERT_EQ(a.code, 0) << a.output;
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_EQ(predictions(b.output), predictions(a.output));
  EXPECT_TRUE(contains(b.output, "0: ")) << b.output;

  // An opset ONNX export does not support is refused by the option's range.
  EXPECT_NE(run_cli("export " + run.string() + " --format onnx --opset 18").code, 0);
  fs::remove_all(root);
}

}  // namespace

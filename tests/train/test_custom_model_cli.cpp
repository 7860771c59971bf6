// A program with its own registered model gets the whole `ember` command line
// (ember::cli::main): examples/custom_model.cpp's binary trains its model,
// evaluates the run, resumes it for more epochs and exports it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_util.h"

namespace {

namespace fs = std::filesystem;
using ember::testing::CliResult;
using ember::testing::contains;

CliResult run_example(const std::string& args) {
  return ember::testing::run_program(EMBER_CUSTOM_MODEL_EXAMPLE, args, 300);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Data rows of metrics.csv (one per completed epoch).
int metric_rows(const fs::path& run) {
  std::istringstream in(read_text(run / "metrics.csv"));
  std::string line;
  int rows = -1;  // the header
  while (std::getline(in, line))
    if (!line.empty()) ++rows;
  return rows;
}

}  // namespace

TEST(CustomModelCli, TrainEvalResumeAndExportTheRegisteredModel) {
  const fs::path root = fs::temp_directory_path() / "ember_custom_model_cli";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/examples/custom_model.yaml";
  CliResult t = run_example("train " + cfg + " model.width=16 data.limit_train=300 data.limit_test=100 "
                            "train.epochs=1 train.threads=2 log.root=" + root.string());
  ASSERT_EQ(t.code, 0) << t.output;
  EXPECT_TRUE(contains(t.output, "test accuracy")) << t.output;
  ASSERT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1);
  const fs::path run = fs::directory_iterator(root)->path();
  EXPECT_TRUE(contains(read_text(run / "config.yaml"), "residual_mlp"));
  EXPECT_EQ(metric_rows(run), 1);

  CliResult e = run_example("eval " + run.string() + " --split val");
  EXPECT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(contains(e.output, "val_acc")) << e.output;
  EXPECT_TRUE(fs::exists(run / "eval_val.json"));

  // The run's config names residual_mlp: only a binary that registers it
  // can rebuild the model, and this one continues the run to 2 epochs.
  CliResult r = run_example("train --resume " + run.string() + " train.epochs=2");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(metric_rows(run), 2);

  const fs::path model = root / "residual_mlp.ember";
  CliResult x = run_example("export " + run.string() + " -o " + model.string());
  EXPECT_EQ(x.code, 0) << x.output;
  EXPECT_TRUE(fs::exists(model)) << x.output;

  // The `ember` executable has no residual_mlp: the same run is a config
  // error there, naming the model.
  CliResult plain = ember::testing::run_cli("eval " + run.string());
  EXPECT_EQ(plain.code, 2) << plain.output;
  EXPECT_TRUE(contains(plain.output, "residual_mlp")) << plain.output;
  fs::remove_all(root);
}

TEST(CustomModelCli, HelpListsTheRegisteredModelAndItsOptions) {
  CliResult h = run_example("train --help");
  EXPECT_EQ(h.code, 0) << h.output;
  EXPECT_TRUE(contains(h.output, "model.name = residual_mlp")) << h.output;
  EXPECT_TRUE(contains(h.output, "model.width")) << h.output;
  EXPECT_EQ(run_example("frobnicate").code, 2);
}

// The program names itself (argv[0]), not `ember`: in the usage line, the
// version and errors. (The resume command an interrupted run prints is
// argv[0] as typed: CheckpointKill.* checks it.)
TEST(CustomModelCli, TheProgramNamesItselfInHelpVersionAndErrors) {
  const std::string name = fs::path(EMBER_CUSTOM_MODEL_EXAMPLE).filename().string();
  CliResult h = run_example("--help");
  EXPECT_EQ(h.code, 0) << h.output;
  EXPECT_TRUE(contains(h.output, "Usage: " + name + " ")) << h.output;
  EXPECT_FALSE(contains(h.output, "Usage: ember")) << h.output;
  CliResult v = run_example("--version");
  EXPECT_TRUE(contains(v.output, name + " (ember ")) << v.output;
  CliResult e = run_example("train");
  EXPECT_EQ(e.code, 2) << e.output;
  EXPECT_TRUE(contains(e.output, name + ": error: " + name + " train needs CONFIG.yaml")) << e.output;
}

// The `ember` command: exit codes (0 success, 1 run failure, 2 usage or
// config error), help text and error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli_util.h"

namespace {

using Result = ember::testing::CliResult;
using ember::testing::run_cli;

}  // namespace

TEST(Cli, HelpListsCommandsAndEveryOptionWithDefaults) {
  Result r = run_cli("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"train", "eval", "version"}) EXPECT_NE(r.output.find(s), std::string::npos) << s;
  Result t = run_cli("train --help");
  EXPECT_EQ(t.code, 0);
  for (const char* s : {"--resume", "optim.lr", "0.001", "data.batch_size", "128", "train.early_stopping.patience",
                        "model.name = resnet", "model.depth", "log.root"})
    EXPECT_NE(t.output.find(s), std::string::npos) << s;
  Result v = run_cli("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.output.find("ember 0."), std::string::npos);
}

TEST(Cli, UsageAndConfigErrorsExitWith2) {
  EXPECT_EQ(run_cli("").code, 2);
  EXPECT_EQ(run_cli("frobnicate").code, 2);
  Result r = run_cli("train");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("CONFIG.yaml"), std::string::npos);
  std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
  Result k = run_cli("train " + cfg + " optim.lrr=0.1");
  EXPECT_EQ(k.code, 2);
  EXPECT_NE(k.output.find("unknown config key 'optim.lrr'; did you mean 'optim.lr'?"), std::string::npos) << k.output;
  Result t = run_cli("train " + cfg + " data.batch_size=big");
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.output.find("expects an int"), std::string::npos);
  Result m = run_cli("train /nonexistent.yaml");
  EXPECT_EQ(m.code, 2);
  EXPECT_NE(m.output.find("cannot read config file '/nonexistent.yaml'"), std::string::npos);
  EXPECT_EQ(run_cli("eval /nonexistent/run").code, 2);
  EXPECT_EQ(run_cli("train --resume /nonexistent/run").code, 2);
  EXPECT_EQ(run_cli("eval /tmp --split nope").code, 2);
}

TEST(Cli, TrainThenEvalAndAFailingRunExitsWith1) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / "ember_cli_runs";
  fs::remove_all(root);
  std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  std::string common = " model.hidden=[16] data.limit_train=500 data.limit_test=100 train.epochs=1 log.root=" +
                       root.string() + " log.name=cli train.threads=2";
  Result r = run_cli("train " + cfg + common);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos);
  ASSERT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1);
  fs::path run = fs::directory_iterator(root)->path();
  Result e = run_cli("eval " + run.string() + " --split val");
  EXPECT_EQ(e.code, 0) << e.output;
  EXPECT_NE(e.output.find("val_acc"), std::string::npos);
  EXPECT_TRUE(fs::exists(run / "eval_val.json"));
  // Resuming a finished run trains no more epochs and succeeds.
  EXPECT_EQ(run_cli("train --resume " + run.string()).code, 0);
  // A huge learning rate: the non-finite-loss guard stops the run (exit 1).
  Result f = run_cli("train " + cfg + common + " optim.lr=1e30");
  EXPECT_EQ(f.code, 1) << f.output;
  EXPECT_NE(f.output.find("non-finite loss"), std::string::npos) << f.output;
}

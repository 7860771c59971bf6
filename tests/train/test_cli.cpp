// The `ember` command: exit codes (0 success, 1 run failure, 2 usage or
// config error), help text and error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

// --reset takes one value per occurrence: the key=value overrides after it
// are overrides (it took them all as resets and refused them, unless it came
// last), and both forms (--reset optimizer, --reset=schedule) repeat.
TEST(Cli, ResetTakesOneValueAndTheOverridesAfterItApply) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "ember_cli_reset";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  Result r = run_cli("train " + cfg + " model.hidden=[16] data.limit_train=300 data.limit_test=100 train.epochs=1 "
                     "schedule.name=none train.threads=1 log.progress=none log.root=" + root.string());
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path run = fs::directory_iterator(root)->path();
  Result a = run_cli("train --resume " + run.string() + " --reset optimizer optim.lr=0.01 train.epochs=2");
  EXPECT_EQ(a.code, 0) << a.output;
  Result b = run_cli("train --resume " + run.string() + " --reset=optimizer --reset schedule train.epochs=3 "
                     "optim.lr=0.02");
  EXPECT_EQ(b.code, 0) << b.output;
  std::ifstream csv(run / "metrics.csv");
  std::string line, lrs;
  std::getline(csv, line);  // epoch,train_loss,train_acc,lr,...
  while (std::getline(csv, line)) {
    size_t c = 0;
    for (int i = 0; i < 3; ++i) c = line.find(',', c) + 1;
    lrs += std::to_string(std::stod(line.substr(c))).substr(0, 4) + " ";
  }
  EXPECT_EQ(lrs, "0.05 0.01 0.02 ");
  Result bad = run_cli("train --resume " + run.string() + " --reset weights");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("expected optimizer or schedule, got 'weights'"), std::string::npos) << bad.output;
  fs::remove_all(root);
}

// Stop after N of M epochs and continue later: --stop-after-epochs saves
// last.ckpt, prints the resume command and exits 0; the resume finishes the
// run (M rows in metrics.csv). A sweep refuses it.
TEST(Cli, StopAfterEpochsThenResumeFinishesTheRun) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "ember_cli_stop_after";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  const std::string args = " model.hidden=[16] data.limit_train=300 data.limit_test=100 train.epochs=3 "
                           "train.threads=1 log.progress=none log.root=" + root.string();
  Result s = run_cli("train " + cfg + args + " --stop-after-epochs 1");
  ASSERT_EQ(s.code, 0) << s.output;
  const fs::path run = fs::directory_iterator(root)->path();
  EXPECT_NE(s.output.find("stopped after epoch 1; continue with: " + std::string(EMBER_CLI) + " train --resume " +
                          run.string()),
            std::string::npos)
      << s.output;
  auto rows = [&] {
    std::ifstream csv(run / "metrics.csv");
    std::string line;
    int n = -1;
    while (std::getline(csv, line)) n += !line.empty();
    return n;
  };
  EXPECT_EQ(rows(), 1);
  Result r = run_cli("train --resume " + run.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(rows(), 3);
  Result m = run_cli("train -m " + cfg + args + " optim.lr=0.1,0.2 --stop-after-epochs 1");
  EXPECT_EQ(m.code, 2) << m.output;
  EXPECT_NE(m.output.find("--stop-after-epochs applies to one run"), std::string::npos) << m.output;
  fs::remove_all(root);
}

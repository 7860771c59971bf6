// Multirun: the grid of `key=a,b` sweeps in a stable order, one run
// directory each, a table at the end; a failing run is reported and the
// command exits non-zero after the others ran.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "ember/train/multirun.h"
#include "ember/train/run_status.h"
#include "cli_util.h"
#include "test_util.h"
#include "train/text_table.h"

using namespace ember::train;
using ember::testing::contains;
using ember::testing::expect_error;
namespace fs = std::filesystem;

TEST(Multirun, GridIsTheCartesianProductFirstKeySlowest) {
  Sweep s = expand_sweep({"model=cnn,mlp", "train.epochs=1", "optim.lr=1e-3,3e-4,1e-4"});
  ASSERT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.axes[0].key, "model");
  EXPECT_EQ(s.axes[1].values, (std::vector<std::string>{"1e-3", "3e-4", "1e-4"}));
  ASSERT_EQ(s.jobs.size(), 6u);
  // Fixed overrides keep their place between the swept ones.
  EXPECT_EQ(s.jobs[0], (std::vector<std::string>{"model=cnn", "train.epochs=1", "optim.lr=1e-3"}));
  EXPECT_EQ(s.jobs[1], (std::vector<std::string>{"model=cnn", "train.epochs=1", "optim.lr=3e-4"}));
  EXPECT_EQ(s.jobs[3], (std::vector<std::string>{"model=mlp", "train.epochs=1", "optim.lr=1e-3"}));
  EXPECT_EQ(s.jobs[5], (std::vector<std::string>{"model=mlp", "train.epochs=1", "optim.lr=1e-4"}));
  EXPECT_EQ(s.values[4], (std::vector<std::string>{"mlp", "3e-4"}));
}

TEST(Multirun, BracketsAndQuotesKeepTheirCommas) {
  Sweep s = expand_sweep({"model.hidden=[64,64],[128]", "data.augment=[hflip, random_crop]", "log.name='a,b'"});
  ASSERT_EQ(s.axes.size(), 1u);
  EXPECT_EQ(s.axes[0].values, (std::vector<std::string>{"[64,64]", "[128]"}));
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[1], (std::vector<std::string>{"model.hidden=[128]", "data.augment=[hflip, random_crop]",
                                                 "log.name='a,b'"}));
  // No sweep: one job with the overrides as given.
  EXPECT_EQ(expand_sweep({"optim.lr=0.1"}).jobs, (std::vector<std::vector<std::string>>{{"optim.lr=0.1"}}));
  expect_error([] { expand_sweep({"optim.lr=1e-3,"}); }, {"'optim.lr=1e-3,' has an empty value"});
  expect_error([] { expand_sweep({"optim.lr=1,2", "optim.lr=3,4"}); }, {"'optim.lr' is swept twice"});
}

TEST(Multirun, TextTableAlignsColumns) {
  EXPECT_EQ(text_table({"run", "lr", "best"}, {{"00-a", "0.1", "0.5000"}, {"01-long-name", "1e-3", "-"}},
                       {false, false, true}),
            "run           lr      best\n"
            "00-a          0.1   0.5000\n"
            "01-long-name  1e-3       -\n");
}

TEST(Multirun, CliRunsTheGridAndReportsTheFailingRun) {
  fs::path root = fs::temp_directory_path() / "ember_multirun";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  const std::string common = " model.hidden=[16] data.limit_train=300 data.limit_test=100 data.val_fraction=0.2 "
                             "train.epochs=1 train.threads=2 log.progress=none log.root=" + root.string();
  // lr 1e30 makes the loss non-finite: those two runs fail, the others finish.
  auto r = ember::testing::run_cli("train -m " + cfg + common + " optim.lr=0.01,1e30 model.dropout=0,0.5", 300);
  EXPECT_EQ(r.code, 1) << r.output;
  ASSERT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1) << r.output;
  const fs::path sweep = fs::directory_iterator(root)->path();
  EXPECT_TRUE(contains(sweep.filename().string(), "fashion_mnist_mlp-")) << sweep;
  EXPECT_TRUE(contains(r.output, "multirun: 2 of 4 runs finished in " + sweep.string())) << r.output;
  const std::vector<std::string> names = {"00-optim.lr=0.01,model.dropout=0", "01-optim.lr=0.01,model.dropout=0.5",
                                          "02-optim.lr=1e30,model.dropout=0", "03-optim.lr=1e30,model.dropout=0.5"};
  const size_t table = r.output.find("multirun: 2 of 4");
  ASSERT_NE(table, std::string::npos);
  const std::string t = r.output.substr(table);
  // "run" is as wide as the longest name (34 characters).
  EXPECT_TRUE(contains(t, "\nrun" + std::string(33, ' ') + "optim.lr  model.dropout  best val_acc  status\n")) << t;
  size_t last = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_TRUE(fs::is_directory(sweep / names[i])) << names[i];
    auto st = read_run_status((sweep / names[i]).string());
    ASSERT_TRUE(st.has_value()) << names[i];
    const size_t at = t.find(names[i]);
    ASSERT_NE(at, std::string::npos) << names[i] << "\n" << t;
    EXPECT_GT(at, last);  // rows in grid order
    last = at;
    const std::string row = t.substr(at, t.find('\n', at) - at);
    if (i < 2) {
      EXPECT_EQ(st->status, "finished");
      EXPECT_EQ(st->epoch, 1);
      EXPECT_EQ(st->monitor, "val_acc");
      EXPECT_GT(st->best, 0.0);
      EXPECT_LE(st->best, 1.0);
      EXPECT_TRUE(contains(row, fmt::format("{:.4f}  finished", st->best))) << row;
    } else {
      EXPECT_EQ(st->status, "failed");
      EXPECT_TRUE(contains(st->error, "non-finite loss")) << st->error;
      EXPECT_TRUE(std::isnan(st->best));
      EXPECT_TRUE(contains(row, "-  failed: non-finite loss")) << row;
    }
  }
}

TEST(Multirun, EveryJobsConfigIsCheckedBeforeAnyTrains) {
  fs::path root = fs::temp_directory_path() / "ember_multirun_bad";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  auto r = ember::testing::run_cli("train -m " + cfg + " model=mlp,resnet model.hidden=[16] log.root=" +
                                       root.string(), 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "multirun job 2 of 2 (model=resnet)")) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown config key 'model.hidden'")) << r.output;
  EXPECT_FALSE(fs::exists(root));  // nothing ran
  EXPECT_EQ(ember::testing::run_cli("train -m --resume /tmp/x").code, 2);
}

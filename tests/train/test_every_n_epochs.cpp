// train.eval_test_every: the test split evaluated every N epochs with the
// current weights, in metrics.csv's test_* columns (nan where not due).
// Also log.report_every, the other per-epoch write key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/train/checkpoint.h"
#include "ember/train/config.h"
#include "ember/train/report.h"
#include "ember/train/trainer.h"

using namespace ember::train;
namespace fs = std::filesystem;

namespace {

Config tiny(int64_t epochs, int64_t every) {
  return load_config("", {"model.name=mlp", "model.hidden=[16]", "data.limit_train=300", "data.limit_test=100",
                          "data.val_fraction=0.2", "data.batch_size=30", "train.epochs=" + std::to_string(epochs),
                          "train.threads=2", "log.progress=none", "log.timing=false",
                          "train.eval_test_every=" + std::to_string(every)});
}

TrainResult run(const Config& c, const fs::path& dir) {
  fs::remove_all(dir);
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  o.run_dir = dir.string();
  return Trainer(c, o).fit();
}

MetricsTable metrics_of(const fs::path& dir) {
  std::ifstream in(dir / "metrics.csv");
  std::stringstream text;
  text << in.rdbuf();
  return MetricsTable::from_csv(text.str(), "metrics.csv");
}

double value(const std::vector<std::pair<std::string, double>>& m, const std::string& name) {
  for (const auto& [k, v] : m)
    if (k == name) return v;
  ADD_FAILURE() << name << " missing";
  return NAN;
}

}  // namespace

TEST(EvalTestEvery, TestColumnsEveryNEpochsNanBetween) {
  const fs::path dir = fs::temp_directory_path() / "ember_eval_test_every_2";
  run(tiny(3, 2), dir);
  MetricsTable t = metrics_of(dir);
  ASSERT_TRUE(t.has_column("test_loss"));
  ASSERT_TRUE(t.has_column("test_acc"));
  std::vector<double> loss = t.column("test_loss"), acc = t.column("test_acc");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_TRUE(std::isnan(loss[0]));
  EXPECT_TRUE(std::isfinite(loss[1]) && loss[1] > 0);
  EXPECT_TRUE(acc[1] >= 0 && acc[1] <= 1);
  EXPECT_TRUE(std::isnan(loss[2]));
  fs::remove_all(dir);
}

TEST(EvalTestEvery, AfterTheOnlyEpochEqualsTheFinalTestWithBestCkpt) {
  // One epoch: best.ckpt holds the weights the per-epoch evaluation used.
  const fs::path dir = fs::temp_directory_path() / "ember_eval_test_every_1";
  TrainResult r = run(tiny(1, 1), dir);
  MetricsTable t = metrics_of(dir);
  ASSERT_EQ(t.column("test_loss").size(), 1u);
  EXPECT_EQ(t.column("test_loss")[0], value(r.test_metrics, "test_loss"));
  EXPECT_EQ(t.column("test_acc")[0], value(r.test_metrics, "test_acc"));
  fs::remove_all(dir);
}

TEST(EvalTestEvery, ZeroKeepsMetricsCsvWithoutTestColumns) {
  const fs::path dir = fs::temp_directory_path() / "ember_eval_test_every_0";
  run(tiny(1, 0), dir);
  EXPECT_FALSE(metrics_of(dir).has_column("test_loss"));
  fs::remove_all(dir);
}

// log.report_every: curves.svg and report.html every N epochs and at the end;
// metrics.csv every epoch.
TEST(ReportEvery, ReportEveryNEpochsMetricsEveryEpoch) {
  const fs::path dir = fs::temp_directory_path() / "ember_report_every";
  fs::remove_all(dir);
  Config c = tiny(3, 0);
  c.set_text("log.report_every", "2");
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  o.run_dir = dir.string();
  std::vector<std::pair<bool, bool>> seen;  // (report.html, metrics.csv) at each epoch's first batch
  o.on_batch_end = [&](int64_t, int64_t batch) {
    if (batch == 0) seen.emplace_back(fs::exists(dir / "report.html"), fs::exists(dir / "metrics.csv"));
  };
  Trainer(c, o).fit();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1], std::make_pair(false, true));  // after epoch 1: metrics.csv only
  EXPECT_EQ(seen[2], std::make_pair(true, true));   // after epoch 2: the report too
  EXPECT_TRUE(fs::exists(dir / "report.html"));
  EXPECT_TRUE(fs::exists(dir / "curves.svg"));
  EXPECT_EQ(metrics_of(dir).size(), 3u);
  fs::remove_all(dir);
}

// train.checkpoint.every: last.ckpt every N epochs and at the end; 0 writes
// it only at the end ("only best and final"), and a run stopped after some
// epochs (stop_after_epochs, as a scheduler's time limit) still leaves its
// resume point, whatever N is.
TEST(CheckpointEvery, EveryNEpochsZeroOnlyAtTheEndAndAlwaysWhenStopped) {
  const fs::path dir = fs::temp_directory_path() / "ember_checkpoint_every";
  auto last_ckpt_at_each_epoch = [&](const std::string& every, int64_t stop_after) {
    fs::remove_all(dir);
    Config c = tiny(4, 0);
    c.set_text("train.checkpoint.every", every);
    std::ostringstream out;
    TrainOptions o;
    o.out = &out;
    o.run_dir = dir.string();
    o.stop_after_epochs = stop_after;
    std::vector<int64_t> seen;  // last.ckpt's epoch at each epoch's first batch (-1: none)
    o.on_batch_end = [&](int64_t, int64_t batch) {
      if (batch != 0) return;
      seen.push_back(fs::exists(dir / "last.ckpt") ? load_checkpoint((dir / "last.ckpt").string()).epoch : -1);
    };
    Trainer(c, o).fit();
    seen.push_back(load_checkpoint((dir / "last.ckpt").string()).epoch);  // after the run
    EXPECT_TRUE(fs::exists(dir / "best.ckpt"));
    return seen;
  };
  EXPECT_EQ(last_ckpt_at_each_epoch("1", 0), (std::vector<int64_t>{-1, 1, 2, 3, 4}));
  EXPECT_EQ(last_ckpt_at_each_epoch("3", 0), (std::vector<int64_t>{-1, -1, -1, 3, 4}));
  EXPECT_EQ(last_ckpt_at_each_epoch("0", 0), (std::vector<int64_t>{-1, -1, -1, -1, 4}));
  EXPECT_EQ(last_ckpt_at_each_epoch("0", 2), (std::vector<int64_t>{-1, -1, 2}));
  // The stopped run resumes from that point and finishes.
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  TrainResult r = Trainer::resume(dir.string(), o).fit();
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.epochs_completed, 4);
  fs::remove_all(dir);
}

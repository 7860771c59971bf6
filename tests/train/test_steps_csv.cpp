// steps.csv: loss, accuracy, macro F1, lr and throughput every
// log.steps_every optimizer steps; a resume drops the rows written after
// last.ckpt.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ember/train/config.h"
#include "ember/train/trainer.h"

using namespace ember::train;
namespace fs = std::filesystem;

namespace {

// 240 training images (300 less a 20% validation split) in batches of 30: 8 steps per epoch.
Config steps_config() {
  return load_config("", {"model.name=mlp", "model.hidden=[16]", "data.limit_train=300", "data.limit_test=100",
                          "data.val_fraction=0.2", "data.batch_size=30", "train.epochs=2", "train.threads=2",
                          "log.progress=none", "log.steps_every=3"});
}

std::vector<std::vector<std::string>> read_csv(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TrainResult run(const Config& c, const std::string& dir, int64_t stop_after = 0) {
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  o.run_dir = dir;
  o.stop_after_epochs = stop_after;
  return Trainer(c, o).fit();
}

}  // namespace

TEST(StepsCsv, ARowEveryNStepsWithTheWindowsLossAccuracyAndF1) {
  const fs::path dir = fs::temp_directory_path() / "ember_steps_csv";
  fs::remove_all(dir);
  run(steps_config(), dir.string());
  auto rows = read_csv(dir / "steps.csv");
  ASSERT_EQ(rows.size(), 6u);  // header + steps 3, 6, 9, 12, 15
  EXPECT_EQ(rows[0], (std::vector<std::string>{"step", "epoch", "batch", "train_loss", "train_acc", "train_f1", "lr",
                                               "images_per_s"}));
  const std::vector<std::vector<std::string>> where = {{"3", "1", "3"}, {"6", "1", "6"}, {"9", "2", "1"},
                                                       {"12", "2", "4"}, {"15", "2", "7"}};
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), 8u);
    EXPECT_EQ(std::vector<std::string>(rows[r].begin(), rows[r].begin() + 3), where[r - 1]);
    const double loss = std::stod(rows[r][3]), acc = std::stod(rows[r][4]), f1 = std::stod(rows[r][5]),
                 lr = std::stod(rows[r][6]);
    EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
    EXPECT_GE(acc, 0.0);
    EXPECT_LE(acc, 1.0);
    // Correct samples over a window of 90 (3 batches) or, for step 9, 30 (the window restarts
    // with the epoch): acc x 90 is a whole number either way.
    EXPECT_NEAR(acc * 90, std::round(acc * 90), 1e-9) << acc;
    EXPECT_GE(f1, 0.0);
    EXPECT_LE(f1, 1.0);
    EXPECT_DOUBLE_EQ(lr, 0.001);  // adam, no schedule
    EXPECT_GT(std::stod(rows[r][7]), 0.0);
  }
}

// One sample per step and per row: a correct prediction is one class with
// F1 1 and nine with 0 (sklearn's macro F1 over labels=range(10),
// zero_division=0), a wrong one is all 0, so each row's F1 is its accuracy / 10.
TEST(StepsCsv, F1IsMacroOverTheWindowsPredictions) {
  const fs::path dir = fs::temp_directory_path() / "ember_steps_csv_f1";
  fs::remove_all(dir);
  run(load_config("", {"model.name=mlp", "model.hidden=[16]", "data.limit_train=50", "data.limit_test=10",
                       "data.val_fraction=0.2", "data.batch_size=1", "train.epochs=1", "train.threads=1",
                       "log.progress=none", "log.steps_every=1"}),
      dir.string());
  auto rows = read_csv(dir / "steps.csv");
  ASSERT_EQ(rows.size(), 41u);  // 40 training images, one step each
  int correct = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    const double acc = std::stod(rows[r][4]), f1 = std::stod(rows[r][5]);
    ASSERT_TRUE(acc == 0.0 || acc == 1.0) << acc;
    EXPECT_DOUBLE_EQ(f1, acc / 10) << "row " << r;
    correct += acc == 1.0;
  }
  EXPECT_GT(correct, 0);  // both kinds of row occur
  EXPECT_LT(correct, 40);
}

// A run resumed over a steps.csv without train_f1 (written by an older
// Ember) keeps that file's columns, so every row matches its header.
TEST(StepsCsv, AResumedOlderFileKeepsItsColumns) {
  const fs::path dir = fs::temp_directory_path() / "ember_steps_csv_old";
  fs::remove_all(dir);
  run(steps_config(), dir.string(), 1);
  auto rows = read_csv(dir / "steps.csv");
  ASSERT_EQ(rows.size(), 3u);
  std::string old = "step,epoch,batch,train_loss,train_acc,lr,images_per_s\n";
  for (size_t r = 1; r < rows.size(); ++r) {
    rows[r].erase(rows[r].begin() + 5);  // train_f1
    old += fmt::format("{}\n", fmt::join(rows[r], ","));
  }
  std::ofstream(dir / "steps.csv", std::ios::trunc) << old;
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  Trainer::resume(dir.string(), o).fit();
  rows = read_csv(dir / "steps.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) EXPECT_EQ(row.size(), 7u);
}

TEST(StepsCsv, ResumeDropsRowsWrittenAfterTheCheckpoint) {
  const fs::path dir = fs::temp_directory_path() / "ember_steps_csv_resume";
  fs::remove_all(dir);
  run(steps_config(), dir.string(), 1);  // epoch 1 only: rows at steps 3 and 6
  ASSERT_EQ(read_csv(dir / "steps.csv").size(), 3u);
  // A row from a step that last.ckpt (after step 8) does not hold: written
  // before a kill, its step will run again.
  std::ofstream(dir / "steps.csv", std::ios::app) << "10,2,2,0.5,0.5,0.4,0.001,100\n";
  std::ostringstream out;
  TrainOptions o;
  o.out = &out;
  Trainer::resume(dir.string(), o).fit();
  auto rows = read_csv(dir / "steps.csv");
  ASSERT_EQ(rows.size(), 6u);
  std::vector<std::string> steps;
  for (size_t r = 1; r < rows.size(); ++r) steps.push_back(rows[r][0]);
  EXPECT_EQ(steps, (std::vector<std::string>{"3", "6", "9", "12", "15"}));
}

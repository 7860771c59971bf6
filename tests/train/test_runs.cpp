// `ember runs`: run directories found under a root (a multirun's nested
// ones too), their status from status.json (or metrics.csv for older runs),
// and only the config keys that differ, in an aligned table or JSON.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ember/train/run_status.h"
#include "ember/train/runs.h"
#include "cli_util.h"

using namespace ember::train;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// A pid that no process has: a child that has exited and been reaped.
int64_t gone_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

RunStatus status(const std::string& what, int64_t epoch, int64_t epochs, double best, double seconds,
                 const std::string& started, int64_t pid) {
  RunStatus s;
  s.status = what;
  s.pid = pid;
  s.host = host();
  s.started = started;
  s.epoch = epoch;
  s.epochs = epochs;
  s.monitor = "val_acc";
  s.best = best;
  s.seconds = seconds;
  return s;
}

fs::path make_runs() {
  fs::path root = fs::temp_directory_path() / "ember_runs_list";
  fs::remove_all(root);
  const std::string cfg = "model:\n  name: mlp\noptim:\n  lr: {}\ntrain:\n  epochs: {}\n  seed: 0\n";
  write(root / "a-1" / "config.yaml", fmt::format(fmt::runtime(cfg), "0.01", 3));
  write_run_status((root / "a-1").string(), status("finished", 3, 3, 0.8125, 185.0, "2026-12-02T10:00:00Z", 1));
  write(root / "b-2" / "config.yaml", fmt::format(fmt::runtime(cfg), "0.1", 3));
  write_run_status((root / "b-2").string(), status("interrupted", 1, 3, 0.5, 42.14, "2026-12-02T10:05:00Z", 1));
  // "running" but its process is gone: killed.
  write(root / "sweep" / "00-x" / "config.yaml", fmt::format(fmt::runtime(cfg), "0.01", 5));
  write_run_status((root / "sweep" / "00-x").string(),
                   status("running", 2, 5, NAN, 7380.0, "2026-12-02T10:10:00Z", gone_pid()));
  // Running in this very process.
  write(root / "sweep" / "01-y" / "config.yaml", fmt::format(fmt::runtime(cfg), "0.01", 5));
  write_run_status((root / "sweep" / "01-y").string(),
                   status("running", 0, 5, NAN, 1.0, "2026-12-02T10:20:00Z", getpid()));
  // Not a run: no status.json or metrics.csv.
  write(root / "notes" / "config.yaml", "x: 1\n");
  return root;
}

}  // namespace

TEST(Runs, DurationsReadAtAGlance) {
  EXPECT_EQ(run_duration_text(42.14), "42.1s");
  EXPECT_EQ(run_duration_text(185), "3m05s");
  EXPECT_EQ(run_duration_text(7380), "2h03m");
  EXPECT_EQ(run_duration_text(NAN), "-");
}

TEST(Runs, TableShowsStatusProgressBestAndTheKeysThatDiffer) {
  fs::path root = make_runs();
  std::vector<RunSummary> runs = list_runs(root.string());
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[2].status, "failed");
  EXPECT_NE(runs[2].error.find("ended without recording an outcome"), std::string::npos) << runs[2].error;
  EXPECT_EQ(differing_keys(runs), (std::vector<std::string>{"optim.lr", "train.epochs"}));
  EXPECT_EQ(runs_table(runs),
            "run         status       epochs  best val_acc  duration  optim.lr  train.epochs\n"
            "a-1         finished        3/3        0.8125     3m05s  0.01      3\n"
            "b-2         interrupted     1/3        0.5000     42.1s  0.1       3\n"
            "sweep/00-x  failed          2/5             -     2h03m  0.01      5\n"
            "sweep/01-y  running         0/5             -      1.0s  0.01      5\n");
  nlohmann::json j = nlohmann::json::parse(runs_json(runs));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[1]["status"], "interrupted");
  EXPECT_DOUBLE_EQ(j[0]["best"].get<double>(), 0.8125);
  EXPECT_TRUE(j[2]["best"].is_null());
  EXPECT_EQ(j[1]["config"], (nlohmann::json{{"optim.lr", "0.1"}, {"train.epochs", "3"}}));
}

// The board's run table shows each run's test results: whole-set values
// only (no per-class ones), null where not finite, none before the test.
TEST(Runs, JsonCarriesTheTestResults) {
  fs::path root = make_runs();
  write(root / "a-1" / "test_metrics.json",
        R"({"test_loss": 0.5, "test_acc": 0.8125, "test_f1[cat]": 0.25, "best_epoch": 3.0, "test_f1": 0.75,
            "test_mse": "x"})");
  write(root / "b-2" / "test_metrics.json", "{not json");
  nlohmann::json j = nlohmann::json::parse(runs_json(list_runs(root.string())));
  EXPECT_EQ(j[0]["results"], (nlohmann::json{{"test_acc", 0.8125}, {"test_f1", 0.75}, {"test_loss", 0.5}}));
  EXPECT_EQ(j[1]["results"], nlohmann::json::object());
  EXPECT_EQ(j[2]["results"], nlohmann::json::object());
}

TEST(Runs, RunsFromBeforeStatusJsonReadMetricsCsv) {
  fs::path root = fs::temp_directory_path() / "ember_runs_legacy";
  fs::remove_all(root);
  write(root / "old" / "config.yaml", "train:\n  epochs: 4\n  checkpoint:\n    monitor: val_acc\n");
  write(root / "old" / "metrics.csv", "epoch,train_loss,val_acc,epoch_time_s\n1,0.9,0.70,10.5\n2,0.7,0.75,10.0\n"
                                      "3,0.6,0.74,9.5\n");
  write(root / "old" / "test_metrics.json", "{}\n");
  std::vector<RunSummary> runs = list_runs(root.string());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[0].epoch, 3);
  EXPECT_EQ(runs[0].epochs, 4);
  EXPECT_EQ(runs[0].monitor, "val_acc");
  EXPECT_DOUBLE_EQ(runs[0].best, 0.75);  // accuracy: the highest
  EXPECT_DOUBLE_EQ(runs[0].seconds, 30.0);
}

TEST(Runs, CliListsRunsAndRefusesAMissingRoot) {
  fs::path root = make_runs();
  auto r = ember::testing::run_cli("runs " + root.string(), 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("sweep/00-x  failed          2/5"), std::string::npos) << r.output;
  auto j = ember::testing::run_cli("runs --json " + root.string(), 60);
  EXPECT_EQ(j.code, 0) << j.output;
  EXPECT_EQ(nlohmann::json::parse(j.output).size(), 4u);
  auto m = ember::testing::run_cli("runs /nonexistent/runs", 60);
  EXPECT_EQ(m.code, 2) << m.output;
  EXPECT_NE(m.output.find("'/nonexistent/runs' is not a folder"), std::string::npos) << m.output;
}

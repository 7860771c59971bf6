// `ember` on bad configs: every config error exits 2 (never 1, never a
// crash or a long stall) with a message naming the file and the field.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ember/train/checkpoint.h"
#include "cli_util.h"

namespace fs = std::filesystem;

namespace {

using Result = ember::testing::CliResult;

// A bounded loader answers at once; the limit keeps a regression from hanging the suite.
Result run_ember(const std::string& args) { return ember::testing::run_cli(args, 60); }

fs::path dir() {
  fs::path p = fs::temp_directory_path() / "ember_config_cli";
  fs::create_directories(p);
  return p;
}

std::string write(const std::string& name, const std::string& text) {
  fs::path p = dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string alias_bomb(int levels) {
  std::string y = "a0: &a0 [x, x, x, x]\n";
  for (int i = 1; i < levels; ++i)
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " {p: *a" + std::to_string(i - 1) + ", q: *a" +
         std::to_string(i - 1) + ", r: *a" + std::to_string(i - 1) + ", s: *a" + std::to_string(i - 1) + "}\n";
  return y;
}

void expect_config_error(const Result& r, std::initializer_list<const char*> needles) {
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("ember: error: "), std::string::npos) << r.output;
  for (const char* n : needles) EXPECT_NE(r.output.find(n), std::string::npos) << "missing: " << n << "\n" << r.output;
}

}  // namespace

TEST(ConfigCli, AliasBombExitsWith2AtOnce) {
  // 14 lines: 4^14 entries to expand; the bounded loader reads 14 lines.
  std::string bomb = write("bomb.yaml", alias_bomb(14));
  Result r = run_ember("train " + bomb);
  expect_config_error(r, {"bomb.yaml:", "expands to more than 10000 nodes"});
  EXPECT_LT(r.seconds, 10.0);
}

TEST(ConfigCli, CheckpointWithAnAliasBombConfigExitsWith2) {
  // `ember eval` reads the config stored in a checkpoint: the same limits.
  ember::train::Checkpoint ckpt;
  ckpt.config_yaml = alias_bomb(14);
  std::string path = (dir() / "bomb.ckpt").string();
  ember::train::save_checkpoint(ckpt, path);
  Result r = run_ember("eval " + path);
  expect_config_error(r, {"bomb.ckpt (config):", "expands to more than"});
  EXPECT_LT(r.seconds, 10.0);
}

TEST(ConfigCli, MalformedConfigsExitWith2NamingFileAndLine) {
  expect_config_error(run_ember("train " + write("dup.yaml", "optim:\n  lr: 0.1\n  lr: 0.2\n")),
                      {"dup.yaml:3:3", "duplicate key 'lr' (first at line 2)"});
  // yaml-cpp's "bad conversion" used to escape as a run failure (exit 1).
  expect_config_error(run_ember("train " + write("cx.yaml", "? [a, b]\n: 1\n")),
                      {"cx.yaml:1:3", "must be a plain name"});
  expect_config_error(run_ember("train " + write("rec.yaml", "a: &a {b: *a}\n")), {"rec.yaml:1:11", "recursive"});
  expect_config_error(run_ember("train " + write("threads.yaml", "train:\n  threads: -4\n")),
                      {"threads.yaml:2:3", "'train.threads' must be in [0, 1024], got -4"});
  expect_config_error(run_ember("train " + write("lr.yaml", "optim:\n  lr: .nan\n")),
                      {"lr.yaml:2:3", "'optim.lr' must be a number, got .nan"});
  std::string ok = write("ok.yaml", "model:\n  name: mlp\n");
  expect_config_error(run_ember("train " + ok + " train.threads=-4"), {"command line", "'train.threads'"});
  expect_config_error(run_ember("train " + ok + " optim.lr=.nan"), {"command line", "'optim.lr'"});
  expect_config_error(run_ember("train " + ok + " data.batch_size=0"), {"'data.batch_size' must be in [1, inf)"});
}

TEST(ConfigCli, BadCsvDataExitsWith2NamingKeyFileAndLine) {
  std::string train = write("train.csv", "a,b,label\n1,2,0\n3,4,1\n5,6,2\n7,8,0\n");
  std::string test = write("test.csv", "a,b,label\n1,2,0\n3,4,9\n");
  std::string cfg = write("csv.yaml", "model:\n  name: mlp\ndata:\n  dataset: csv\n  train_file: " + train +
                                          "\n  test_file: " + test + "\n  num_workers: 0\n  val_fraction: 0\n");
  std::string common = " log.root=" + (dir() / "runs").string() + " log.progress=none train.threads=1";
  expect_config_error(run_ember("train " + cfg + common), {"data.test_file", "test.csv", "line 3", "label 9"});
  std::string header = write("header.csv", "a,b,label\n");
  expect_config_error(run_ember("train " + cfg + common + " data.test_file=" + header),
                      {"data.test_file", "header.csv", "no data rows"});
  std::string big = write("big.csv", "a,b,label\n1,2,0\n1e39,4,1\n");
  expect_config_error(run_ember("train " + cfg + common + " data.train_file=" + big),
                      {"data.train_file", "big.csv", "line 3", "column 'a'", "overflows float32"});
}

TEST(ConfigCli, HelpShowsRanges) {
  Result r = run_ember("train --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("(in [0, 1024])"), std::string::npos) << r.output;
}

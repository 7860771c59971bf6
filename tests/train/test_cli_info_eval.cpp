// `ember info RUN_DIR` (the run's env.json), `ember eval` (values in one
// column; results named per checkpoint) and help text that cites only files
// of the repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

namespace {

namespace fs = std::filesystem;
using ember::testing::CliResult;
using ember::testing::contains;
using ember::testing::run_cli;

// One tiny finished run of its own for each test (ctest runs tests as
// parallel processes: a shared folder would be removed under another test).
fs::path tiny_run(const std::string& name) {
  const fs::path root = fs::temp_directory_path() / ("ember_cli_" + name);
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  CliResult r = run_cli("train " + cfg + " model.hidden=[16] data.limit_train=300 data.limit_test=100 "
                        "train.epochs=1 train.threads=2 train.seed=7 log.name=tiny log.root=" + root.string(), 300);
  EXPECT_EQ(r.code, 0) << r.output;
  return fs::directory_iterator(root)->path();
}

// The column where the value starts on each indented "  key  value" line.
std::set<size_t> value_columns(const std::string& text) {
  std::set<size_t> cols;
  std::istringstream in(text);
  std::string line;
  const std::regex row("^  (\\S.*\\S)  +(\\S+)$");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, row)) cols.insert(static_cast<size_t>(m.position(2)));
  return cols;
}

}  // namespace

TEST(CliInfo, RunDirPrintsItsEnvironment) {
  const fs::path run = tiny_run("info");
  CliResult r = run_cli("info " + run.string());
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* key : {"env.json", "ember_version", "compiler", "onednn", "cpu", "threads", "host"})
    EXPECT_TRUE(contains(r.output, key)) << key << "\n" << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n  seed +7\n"))) << r.output;
  EXPECT_EQ(value_columns(r.output).size(), 1u) << r.output;
  CliResult plain = run_cli("info");
  EXPECT_EQ(plain.code, 0);
  EXPECT_TRUE(contains(plain.output, "models: cnn")) << plain.output;
  CliResult missing = run_cli("info /nonexistent/run");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.output, "'/nonexistent/run' has no env.json")) << missing.output;
}

TEST(CliEval, ValuesAlignAndEachCheckpointKeepsItsResults) {
  const fs::path run = tiny_run("eval_checkpoints");
  CliResult best = run_cli("eval " + run.string());
  ASSERT_EQ(best.code, 0) << best.output;
  // Per-class names ("test_precision[Ankle boot]") are longer than 20.
  EXPECT_TRUE(contains(best.output, "test_precision[Ankle boot]")) << best.output;
  EXPECT_EQ(value_columns(best.output).size(), 1u) << best.output;
  EXPECT_TRUE(fs::exists(run / "eval_test.json"));
  CliResult last = run_cli("eval " + (run / "last.ckpt").string());
  ASSERT_EQ(last.code, 0) << last.output;
  EXPECT_TRUE(contains(last.output, "eval_last_test.json")) << last.output;
  EXPECT_TRUE(fs::exists(run / "eval_last_test.json"));
  EXPECT_TRUE(fs::exists(run / "eval_test.json"));
}

TEST(CliHelp, CitesOnlyFilesThatExist) {
  std::vector<std::string> commands = {""};
  // Every subcommand that `ember --help` lists.
  CliResult top = run_cli("--help");
  ASSERT_EQ(top.code, 0);
  std::istringstream in(top.output.substr(top.output.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  const std::regex sub("^  ([a-z-]+) .*");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, sub)) commands.push_back(m[1]);
  ASSERT_GE(commands.size(), 10u) << top.output;
  // Repository paths (a/b.ext) and top-level documents (NAME.md).
  const std::regex cited("([A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\\.(yaml|cpp|h|md|py)|\\b[A-Z][A-Z_]+\\.md");
  int checked = 0;
  for (const std::string& c : commands) {
    CliResult h = run_cli(c + " --help");
    EXPECT_EQ(h.code, 0) << c;
    for (std::sregex_iterator it(h.output.begin(), h.output.end(), cited), end; it != end; ++it) {
      const std::string path = it->str();
      EXPECT_TRUE(fs::exists(fs::path(EMBER_SOURCE_DIR) / path)) << "`ember " << c << " --help` cites " << path;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);  // train --help cites configs/model/resnet.yaml
}

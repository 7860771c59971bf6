// `ember train`'s thread count with train.threads 0: pinned while
// train.deterministic holds (the same seed repeats bitwise), adaptive when it
// does not (Note [adaptive thread count]). Run without OMP_NUM_THREADS, which
// would make the count the user's own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_util.h"

namespace {

namespace fs = std::filesystem;
using ember::testing::CliResult;
using ember::testing::contains;

struct TrainRun {
  CliResult result;
  std::string env_json;
};

TrainRun train_without_omp_env(const std::string& name, const std::string& extra) {
  const fs::path root = fs::temp_directory_path() / ("ember_cli_threads_" + name);
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  TrainRun run;
  run.result = ember::testing::run_program(
      std::string("env -u OMP_NUM_THREADS -u EMBER_ADAPTIVE_THREADS ") + EMBER_CLI,
      "train " + cfg + " model.hidden=[16] data.limit_train=300 data.limit_test=100 train.epochs=1 train.seed=7 "
      "log.name=t log.root=" + root.string() + " " + extra, 300);
  if (!fs::is_directory(root) || fs::is_empty(root)) return run;
  std::ifstream f(fs::directory_iterator(root)->path() / "env.json");
  std::stringstream text;
  text << f.rdbuf();
  run.env_json = text.str();
  fs::remove_all(root);
  return run;
}

TEST(CliTrainThreads, DeterministicRunsPinTheCountAndOthersAdapt) {
  const TrainRun pinned = train_without_omp_env("pinned", "");
  ASSERT_EQ(pinned.result.code, 0) << pinned.result.output;
  EXPECT_TRUE(contains(pinned.env_json, "\"adaptive_threads\": \"no\"")) << pinned.env_json;
  EXPECT_FALSE(contains(pinned.result.output, "(adaptive")) << pinned.result.output;

  const TrainRun adaptive = train_without_omp_env("adaptive", "train.deterministic=false");
  ASSERT_EQ(adaptive.result.code, 0) << adaptive.result.output;
  EXPECT_TRUE(contains(adaptive.env_json, "\"adaptive_threads\": \"yes\"")) << adaptive.env_json;
  EXPECT_TRUE(contains(adaptive.result.output, "threads (adaptive: fewer while other processes hold CPUs)"))
      << adaptive.result.output;

  // A chosen count is kept, deterministic or not.
  const TrainRun chosen = train_without_omp_env("chosen", "train.deterministic=false train.threads=1");
  ASSERT_EQ(chosen.result.code, 0) << chosen.result.output;
  EXPECT_TRUE(contains(chosen.env_json, "\"adaptive_threads\": \"no\"")) << chosen.env_json;
  EXPECT_TRUE(contains(chosen.env_json, "\"threads\": \"1\"")) << chosen.env_json;
}

}  // namespace

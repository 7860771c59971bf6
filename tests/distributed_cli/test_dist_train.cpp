// `mpirun -np 2 ember train ... dist.enabled=true` end to end on a tiny
// Fashion-MNIST run: one run directory written by rank 0, rank-1.log, the
// global batch in the log, checkpoints without a "module." prefix, resume with
// the same world size only, and a failing or dying rank ending the job.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/train/checkpoint.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;  // stdout + stderr
  double seconds;
};

Result sh(const std::string& cmd) {
  auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, s};
}

std::string mpirun() {
  const char* m = std::getenv("EMBER_MPIEXEC");
  EXPECT_NE(m, nullptr) << "ctest sets EMBER_MPIEXEC";
  return std::string(m ? m : "mpiexec") + " --oversubscribe --allow-run-as-root --mca btl self,tcp";
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string train_args(const fs::path& root, int epochs) {
  return std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml model.hidden=[16] data.limit_train=300 " +
         "data.limit_test=64 data.batch_size=16 train.threads=1 log.progress=none log.name=dist log.root=" +
         root.string() + " train.epochs=" + std::to_string(epochs);
}

TEST(DistributedTrain, TwoRanksWriteOneRunDirectoryAndResumeOnlyWithTwo) {
  fs::path root = fs::temp_directory_path() / "ember_dist_runs";
  fs::remove_all(root);
  Result r = sh(mpirun() + " -np 2 " + EMBER_CLI + " train " + train_args(root, 2) + " dist.enabled=true");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("global batch 32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;
  ASSERT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1) << "one run directory";
  fs::path run = fs::directory_iterator(root)->path();
  for (const char* f : {"train.log", "rank-1.log", "last.ckpt", "best.ckpt", "metrics.csv", "config.yaml"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  EXPECT_FALSE(fs::exists(run / "rank-0.log"));
  std::string log0 = read(run / "train.log"), log1 = read(run / "rank-1.log");
  EXPECT_NE(log0.find("rank 0 of 2"), std::string::npos) << log0;
  EXPECT_NE(log1.find("rank 1 of 2"), std::string::npos) << log1;
  // 300 samples less the 10% validation split: 270 over 2 ranks, 135 each.
  EXPECT_NE(log0.find("135 train samples per rank"), std::string::npos) << log0;
  ember::train::Checkpoint c = ember::train::load_checkpoint((run / "last.ckpt").string());
  ASSERT_FALSE(c.model.empty());
  for (const auto& [key, value] : c.model) EXPECT_NE(key.rfind("module.", 0), 0u) << key;
  EXPECT_EQ(c.epoch, 2);

  // Another world size is refused, naming the one to use.
  Result one = sh(std::string(EMBER_CLI) + " train --resume " + run.string() + " train.epochs=3");
  EXPECT_EQ(one.code, 2) << one.output;
  EXPECT_NE(one.output.find("trained on 2 ranks but this job has 1"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("mpirun -np 2"), std::string::npos) << one.output;
  // The same world size resumes (a finished run: it sets up, checks and ends).
  Result again = sh(mpirun() + " -np 2 " + EMBER_CLI + " train --resume " + run.string());
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(read(run / "train.log").find("resuming " + run.string()), std::string::npos);
  EXPECT_NE(read(run / "rank-1.log").find("resuming " + run.string()), std::string::npos);
}

TEST(DistributedTrain, RanksWithoutDistEnabledAreRefused) {
  fs::path root = fs::temp_directory_path() / "ember_dist_refused";
  fs::remove_all(root);
  Result r = sh(mpirun() + " -np 2 " + EMBER_CLI + " train " + train_args(root, 1));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("dist.enabled is false"), std::string::npos) << r.output;
}

// Rank 1 raises during setup (a bad batch size) while rank 0 waits for it in
// a collective: the job ends with rank 1 named, long before any timeout.
TEST(DistributedTrain, ARaisingRankEndsTheJobNamingIt) {
  fs::path root = fs::temp_directory_path() / "ember_dist_raise";
  fs::remove_all(root);
  std::string cmd = mpirun() + " -np 1 " + EMBER_CLI + " train " + train_args(root, 1) + " dist.enabled=true : -np 1 " +
                    EMBER_CLI + " train " + train_args(root, 1) + " dist.enabled=true data.batch_size=0";
  Result r = sh(cmd);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("ember: rank 1 of 2: error: command line: config key 'data.batch_size'"), std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 60.0);
}

// Rank 1 is killed (SIGKILL) mid-training: the launcher ends rank 0 too.
TEST(DistributedTrain, ADyingRankEndsTheJob) {
  fs::path root = fs::temp_directory_path() / "ember_dist_die";
  fs::remove_all(root);
  std::string args = train_args(root, 200) + " dist.enabled=true";
  std::string cmd = mpirun() + " -np 1 " + EMBER_CLI + " train " + args + " : -np 1 timeout -s KILL 4 " + EMBER_CLI +
                    " train " + args;
  Result r = sh(cmd);
  EXPECT_NE(r.code, 0) << r.output;
  // OpenMPI's launcher: "... noticed that process rank 1 with PID ... exited on signal 9 (Killed)".
  EXPECT_NE(r.output.find("process rank 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("signal 9"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 90.0) << r.output;
}

}  // namespace

namespace {

// `ember bench dist --simulate`: the measured timeline replayed for 2..256
// ranks; the table rows and the models are there, efficiencies in (0, 100].
TEST(DistributedBench, SimulatePrintsTheScalingTable) {
  Result r = sh(std::string(EMBER_CLI) + " bench dist --simulate --steps 1");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* s : {"cnn:", "resnet18:", "lstm:", "scaling efficiency", "256", "compute x10 faster",
                        "bucket size at 25 Gbit/s, 64 ranks"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
  Result bad = sh(std::string(EMBER_CLI) + " bench dist --simulate --steps 0");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("--steps must be at least 1"), std::string::npos) << bad.output;
}

}  // namespace

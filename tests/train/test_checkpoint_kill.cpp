// kill -9 during checkpoint writes (issue 13): the previous checkpoint stays
// loadable, the writer's leftover temp files are removed by the next write or
// resume (never another live process's), and `ember train --resume` continues.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "ember/io/atomic_file.h"
#include "ember/train/checkpoint.h"

using namespace ember;
using namespace ember::train;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ember_kill_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::vector<std::string> temp_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

void touch(const fs::path& p) { std::ofstream(p) << "partial checkpoint"; }

// The PID of a process that has exited (and been reaped).
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST(CheckpointKill, StaleTempFilesAreRemovedButNotALiveWritersOrForeignFiles) {
  fs::path dir = fresh_dir("stale");
  const pid_t dead = dead_pid();
  const pid_t live = getppid();  // alive for the whole test
  touch(dir / fmt::format("last.ckpt.tmp.{}.0badf00d", dead));
  touch(dir / fmt::format("best.ckpt.tmp.{}.12345678", dead));
  touch(dir / fmt::format("last.ckpt.tmp.{}.cafebabe", live));
  touch(dir / fmt::format("best.ckpt.tmp.{}.deadbeef", live));
  fs::last_write_time(dir / fmt::format("best.ckpt.tmp.{}.deadbeef", live),
                      fs::file_time_type::clock::now() - std::chrono::hours(48));  // PID reused long after
  touch(dir / "notes.tmp.txt");                                  // not our pattern
  touch(dir / fmt::format("data.tmp.{}.xyz", dead));             // not 8 hex digits
  // A write of last.ckpt cleans its own target's leftovers only.
  Checkpoint c;
  c.model.insert("w", ones({4}));
  save_checkpoint(c, (dir / "last.ckpt").string());
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(temp_files(dir)), sorted({fmt::format("best.ckpt.tmp.{}.12345678", dead),
                                             fmt::format("best.ckpt.tmp.{}.deadbeef", live),
                                             fmt::format("data.tmp.{}.xyz", dead),
                                             fmt::format("last.ckpt.tmp.{}.cafebabe", live), "notes.tmp.txt"}));
  // The whole-directory sweep (what --resume runs).
  EXPECT_EQ(io::remove_stale_temp_files(dir.string()), 2u);
  EXPECT_EQ(sorted(temp_files(dir)), sorted({fmt::format("data.tmp.{}.xyz", dead),
                                             fmt::format("last.ckpt.tmp.{}.cafebabe", live), "notes.tmp.txt"}));
  EXPECT_EQ(load_checkpoint((dir / "last.ckpt").string()).model.at("w").sum().item<float>(), 4.0f);
}

TEST(CheckpointKill, KillNineDuringWritesKeepsThePreviousCheckpointLoadable) {
  fs::path dir = fresh_dir("fork");
  const std::string path = (dir / "last.ckpt").string();
  Checkpoint c;
  c.model.insert("w", arange(1 << 18, kFloat32));  // 1 MB: a write takes long enough to be cut
  c.rng_state = default_generator().get_state();
  c.trainer_json = "{}";
  save_checkpoint(c, path);
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> delay_us(500, 30000);
  int64_t last_epoch = 0;
  int kills = 0, leftovers_seen = 0;
  const auto start = std::chrono::steady_clock::now();
  auto kill_round = [&](int round, std::chrono::microseconds delay) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child only writes (no thread pool work after fork): epochs count up.
      try {
        for (int64_t e = last_epoch + 1;; ++e) {
          c.epoch = e;
          save_checkpoint(c, path);
        }
      } catch (...) {
      }
      _exit(3);
    }
    std::this_thread::sleep_for(delay);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed on its own (status " << status << ")";
    ++kills;
    // Whatever the kill interrupted, the checkpoint on disk is a whole one.
    Checkpoint got = load_checkpoint(path);
    EXPECT_GE(got.epoch, last_epoch);
    EXPECT_EQ(got.model.at("w").numel(), 1 << 18);
    EXPECT_EQ(got.model.at("w")[12345].item<float>(), 12345.0f);
    last_epoch = got.epoch;
    // The next write removes the dead writer's leftover: at most the latest
    // kill's temp file is ever on disk (before the fix they piled up).
    std::vector<std::string> left = temp_files(dir);
    leftovers_seen += !left.empty();
    EXPECT_LE(left.size(), 1u) << "round " << round << ": " << fmt::format("{}", fmt::join(left, ", "));
  };
  for (int round = 0; round < 16; ++round) kill_round(round, std::chrono::microseconds(delay_us(rng)));
  EXPECT_EQ(kills, 16);
  // A loaded machine can starve the writer through all of those delays: give
  // it longer ones (50 ms to 6.4 s) until one write lands, so the test always
  // sees writes complete between kills as well as cut ones.
  for (int round = 16; last_epoch == 0 && round < 24; ++round)
    kill_round(round, std::chrono::milliseconds(50 << (round - 16)));
  EXPECT_GT(last_epoch, 0) << "no write ever completed; the kill delays are too short for this disk";
  io::remove_stale_temp_files(dir.string());
  EXPECT_TRUE(temp_files(dir).empty());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 60.0);
  std::printf("[ kill -9 ] %d kills, %d left a temp file, last epoch on disk %ld, %.2f s\n", kills, leftovers_seen,
              static_cast<long>(last_epoch), secs);
}

#if defined(EMBER_CLI)
namespace {

// Starts `ember args...` with output to log; returns its PID.
pid_t spawn_ember(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "a", stdout);
    if (f) dup2(fileno(stdout), STDERR_FILENO);
    std::vector<char*> argv;
    std::string exe = EMBER_CLI;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(CheckpointKill, EmberTrainKilledAtRandomTimesResumesToTheEnd) {
  fs::path root = fresh_dir("cli");
  fs::path log = root / "output.txt";
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  std::vector<std::string> args = {"train",          cfg,
                                   "model.hidden=[16]", "data.limit_train=300",
                                   "data.limit_test=50", "data.val_fraction=0",
                                   "train.checkpoint.monitor=train_loss", "train.epochs=12",
                                   "train.threads=1", "data.num_workers=0",
                                   "log.progress=none", "log.root=" + (root / "runs").string(),
                                   "log.name=kill"};
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> delay_ms(0, 250);
  // First run: killed at a random time once its first checkpoint exists.
  pid_t pid = spawn_ember(args, log);
  fs::path run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(root / "runs"))
      for (const auto& e : fs::directory_iterator(root / "runs")) run = e.path();
    if (!run.empty() && fs::exists(run / "last.ckpt")) break;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) FAIL() << "ember train ended early:\n" << read_text(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(!run.empty() && fs::exists(run / "last.ckpt")) << read_text(log);
  // A leftover of a writer killed earlier (a dead PID): the resume removes it.
  touch(run / fmt::format("last.ckpt.tmp.{}.00c0ffee", dead_pid()));
  int64_t epoch = 0;
  int resumes = 0;
  bool running = true;
  for (int round = 0; round < 3 && running; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(pid, SIGKILL);
    const int code = wait_exit(pid);
    ASSERT_TRUE(code == -SIGKILL || code == 0) << "exit " << code << "\n" << read_text(log);
    Checkpoint c = load_checkpoint((run / "last.ckpt").string());  // loadable after every kill
    EXPECT_GE(c.epoch, epoch);
    epoch = c.epoch;
    running = code != 0;
    if (running) {
      pid = spawn_ember({"train", "--resume", run.string()}, log);
      ++resumes;
    }
  }
  // The last resume runs to the end (resuming a finished run is a no-op that
  // still sweeps the leftovers).
  if (!running) pid = spawn_ember({"train", "--resume", run.string()}, log);
  EXPECT_EQ(wait_exit(pid), 0) << read_text(log);
  Checkpoint last = load_checkpoint((run / "last.ckpt").string());
  EXPECT_EQ(last.epoch, 12);
  EXPECT_TRUE(temp_files(run).empty()) << fmt::format("{}", fmt::join(temp_files(run), ", "));
  if (resumes > 0) {
    EXPECT_NE(read_text(log).find("resuming"), std::string::npos);
  }
  std::printf("[ kill -9 ] ember train: %d resumes, epoch %ld on disk before the last one\n", resumes,
              static_cast<long>(epoch));
}

// Note [interrupts]: SIGTERM (a scheduler's preemption) and a first Ctrl-C
// finish the step, save last.ckpt and print the resume command; a second
// Ctrl-C exits at once. Exit codes as a shell reports them: 143, 130.
TEST(CheckpointKill, SigtermSavesAndTellsHowToResumeASecondCtrlCQuitsAtOnce) {
  fs::path root = fresh_dir("signals");
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  auto args = [&](const std::string& name) {
    return std::vector<std::string>{"train", cfg, "model.hidden=[16]", "data.limit_train=3000", "data.limit_test=50",
                                    "data.val_fraction=0", "data.batch_size=10", "train.checkpoint.monitor=train_loss",
                                    "train.epochs=50", "train.threads=1", "data.num_workers=0", "log.progress=none",
                                    "log.root=" + (root / name).string(), "log.name=" + name};
  };
  // Waits until the run is training (its header is logged) and returns its directory.
  auto started = [&](pid_t pid, const fs::path& log, const std::string& name) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline && read_text(log).find("run directory:") == std::string::npos) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) return fs::path();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    fs::path run;
    if (fs::exists(root / name))
      for (const auto& e : fs::directory_iterator(root / name)) run = e.path();
    return run;
  };
  {
    const fs::path log = root / "term.txt";
    pid_t pid = spawn_ember(args("term"), log);
    const fs::path run = started(pid, log, "term");
    ASSERT_FALSE(run.empty()) << read_text(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(pid, SIGTERM);
    EXPECT_EQ(wait_exit(pid), 143) << read_text(log);
    const std::string out = read_text(log);
    EXPECT_NE(out.find("terminated: finishing the current step and saving last.ckpt"), std::string::npos) << out;
    // The command as typed (argv[0]), so it can be pasted back.
    EXPECT_NE(out.find("last.ckpt saved; continue with: " + std::string(EMBER_CLI) + " train --resume " + run.string()),
              std::string::npos)
        << out;
    Checkpoint c = load_checkpoint((run / "last.ckpt").string());
    EXPECT_LT(c.epoch, 50);
    EXPECT_GT(c.step, 0);
  }
  {
    // Steps of the reference CNN at batch 256 on one thread take a while, so
    // the second Ctrl-C arrives while the first is still finishing its step.
    const fs::path log = root / "int.txt";
    const std::string cnn = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml";
    pid_t pid = spawn_ember({"train", cnn, "data.limit_train=3000", "data.limit_test=50", "data.val_fraction=0",
                             "data.batch_size=256", "train.checkpoint.monitor=train_loss", "train.threads=1",
                             "data.num_workers=0", "log.progress=none", "log.root=" + (root / "int").string(),
                             "log.name=int"},
                            log);
    ASSERT_FALSE(started(pid, log, "int").empty()) << read_text(log);
    kill(pid, SIGINT);
    const auto first = std::chrono::steady_clock::now();
    while (read_text(log).find("interrupted: finishing") == std::string::npos &&
           std::chrono::steady_clock::now() - first < std::chrono::seconds(10))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    kill(pid, SIGINT);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(wait_exit(pid), 130) << read_text(log);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
    EXPECT_NE(read_text(log).find("interrupted again: exiting now"), std::string::npos) << read_text(log);
  }
}
#endif

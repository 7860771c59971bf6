// The adaptive thread count (Note [adaptive thread count]): /proc/stat
// parsing on fixtures, the load arithmetic and the count rule in closed
// form, the policy switches, and a real drop to one thread while another
// process spins on one of two CPUs.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "core/cpu_load.h"
#include "ember/core/adaptive_threads.h"
#include "ember/core/parallel.h"

using namespace ember;

namespace {

// /proc/stat of a 3-CPU machine: cpu0 is busy 60 of 100 ticks (iowait
// counts as idle, steal as busy), cpu1 10 of 100, cpu2 all idle.
constexpr const char* kStat =
    "cpu  85 0 15 200 10 0 0 5 0 0\n"
    "cpu0 40 0 10 35 5 0 0 10 3 0\n"
    "cpu1 5 0 5 85 5 0 0 0 0 0\n"
    "cpu2 0 0 0 100 0 0 0 0 0 0\n"
    "intr 12345 1 2 3\n"
    "ctxt 999\n";

TEST(CpuLoad, SumsTheListedCpusLines) {
  auto both = cpu_load::parse_proc_stat(kStat, {0, 1});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->busy, 60u + 10u);
  EXPECT_EQ(both->total, 100u + 100u);
  auto idle = cpu_load::parse_proc_stat(kStat, {2});
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->busy, 0u);
  EXPECT_EQ(idle->total, 100u);
  // Four fields (kernels before 2.6): idle is the fourth.
  auto old = cpu_load::parse_proc_stat("cpu0 3 1 2 14\n", {0});
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->busy, 6u);
  EXPECT_EQ(old->total, 20u);
}

TEST(CpuLoad, AMissingOrMalformedLineGivesNoReading) {
  EXPECT_FALSE(cpu_load::parse_proc_stat(kStat, {0, 7}).has_value());  // cpu7 is not there
  EXPECT_FALSE(cpu_load::parse_proc_stat(kStat, {}).has_value());
  EXPECT_FALSE(cpu_load::parse_proc_stat("cpu0 1 2 x 4\n", {0}).has_value());
  EXPECT_FALSE(cpu_load::parse_proc_stat("cpu0 1 2\n", {0}).has_value());
  EXPECT_FALSE(cpu_load::parse_proc_stat("", {0}).has_value());
}

TEST(CpuLoad, ReadsThisMachinesStatUpToTheFirstNonCpuLine) {
  auto text = cpu_load::read_proc_stat_cpu_lines();
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->find("intr"), std::string::npos);
  EXPECT_TRUE(cpu_load::parse_proc_stat(*text, cpu_load::affinity_cpu_list()).has_value());
  EXPECT_FALSE(cpu_load::read_proc_stat_cpu_lines("/nonexistent/stat").has_value());
}

TEST(CpuLoad, OtherCoresIsTheBusyShareLessOwnUse) {
  // Two CPUs, 150 of 200 ticks busy: 1.5 cores, of which this process used 0.9.
  EXPECT_NEAR(cpu_load::other_cores({100, 1000}, {250, 1200}, 2, 0.9), 0.6, 1e-12);
  EXPECT_EQ(cpu_load::other_cores({100, 1000}, {250, 1200}, 2, 1.8), 0.0);  // tick rounding: never negative
  EXPECT_EQ(cpu_load::other_cores({100, 1000}, {100, 1000}, 2, 0.0), 0.0);  // no time passed
}

TEST(CpuLoad, ThreadCountDropsWhenACoreIsTakenAndRisesWhenOneIsFree) {
  using cpu_load::next_thread_count;
  // Two CPUs, two threads: a hog that Ember's threads fight reads 0.7-0.9.
  EXPECT_EQ(next_thread_count(2, 2, 2, 0.8), 1);
  EXPECT_EQ(next_thread_count(2, 2, 2, 0.4), 1);
  EXPECT_EQ(next_thread_count(2, 2, 2, 0.3), 2);  // noise: stay
  // One thread while the hog holds its core: stay; hog gone: back to two.
  EXPECT_EQ(next_thread_count(1, 2, 2, 1.0), 1);
  EXPECT_EQ(next_thread_count(1, 2, 2, 0.3), 1);  // not yet a whole spare core
  EXPECT_EQ(next_thread_count(1, 2, 2, 0.2), 2);
  // Never above the request, never below one.
  EXPECT_EQ(next_thread_count(1, 1, 8, 0.0), 1);
  EXPECT_EQ(next_thread_count(2, 2, 2, 5.0), 1);
  // A large machine: three busy cores cost three threads, in one step each way.
  EXPECT_EQ(next_thread_count(64, 64, 64, 3.2), 61);
  EXPECT_EQ(next_thread_count(61, 64, 64, 0.1), 64);
  // More threads requested than CPUs (a forced ceiling): down to the CPUs.
  EXPECT_EQ(next_thread_count(4, 4, 2, 0.0), 2);
}

TEST(AdaptiveThreads, AChosenCountIsKeptExactly) {
  if (std::getenv("EMBER_ADAPTIVE_THREADS")) GTEST_SKIP() << "EMBER_ADAPTIVE_THREADS is set in this environment";
  // ctest sets OMP_NUM_THREADS, a count the user chose: fixed from the start.
  if (std::getenv("OMP_NUM_THREADS")) {
    EXPECT_FALSE(adaptive_threads());
  }
  set_num_threads(2);
  EXPECT_FALSE(adaptive_threads());
  set_adaptive_threads(true);
  EXPECT_TRUE(adaptive_threads());
  set_num_threads(2);  // a chosen count turns adaptation off again
  EXPECT_FALSE(adaptive_threads());
  EXPECT_EQ(get_num_threads(), 2);
}

// Pins every thread of this process (OpenMP's workers too) to `cpus`.
void pin_process(const cpu_set_t& cpus) {
  DIR* dir = opendir("/proc/self/task");
  ASSERT_NE(dir, nullptr);
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    sched_setaffinity(static_cast<pid_t>(std::stol(e->d_name)), sizeof(cpus), &cpus);
  }
  closedir(dir);
}

TEST(AdaptiveThreads, DropsToOneThreadWhileAnotherProcessSpinsOnOneOfTwoCpus) {
  const std::vector<int> mine = cpu_load::affinity_cpu_list();
  if (mine.size() < 2) GTEST_SKIP() << "needs two CPUs; this process may use " << mine.size();
  cpu_set_t before, two, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  CPU_ZERO(&two);
  CPU_SET(mine[0], &two);
  CPU_SET(mine[1], &two);
  CPU_ZERO(&one);
  CPU_SET(mine[1], &one);
  pin_process(two);

  const pid_t hog = fork();
  ASSERT_GE(hog, 0);
  if (hog == 0) {
    sched_setaffinity(0, sizeof(one), &one);
    std::atomic<unsigned> spins{0};
    for (;;) spins.fetch_add(1, std::memory_order_relaxed);
  }
  set_num_threads(2);
  set_adaptive_threads(true);  // reads the two-CPU mask; the chosen 2 is the ceiling
  ASSERT_TRUE(adaptive_threads());
  std::vector<float> data(1 << 20, 1.0f);
  int seen = get_num_threads();
  const auto start = std::chrono::steady_clock::now();
  while (seen > 1 && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    // Work that forks, as a training step would; each fork may sample.
    parallel_for(0, static_cast<int64_t>(data.size()), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) data[static_cast<size_t>(i)] = data[static_cast<size_t>(i)] * 1.0000001f;
    });
    seen = get_num_threads();
  }
  kill(hog, SIGKILL);
  waitpid(hog, nullptr, 0);
  set_adaptive_threads(false);
  set_num_threads(2);
  pin_process(before);
  EXPECT_EQ(seen, 1) << "a process spinning on one of two CPUs should leave Ember one thread";
}

}  // namespace

// The default thread count: cgroup CPU quota parsing (v2 cpu.max, v1
// cfs_quota_us / cfs_period_us) on fixture files, and the cap it puts on the
// affinity count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/cpu_quota.h"
#include "ember/core/parallel.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

// A fresh fake cgroup root with the given files.
fs::path fixture(const std::string& name, std::initializer_list<std::pair<std::string, std::string>> files) {
  fs::path root = fs::temp_directory_path() / ("ember_cgroup_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const auto& [path, text] : files) {
    fs::create_directories((root / path).parent_path());
    std::ofstream(root / path) << text;
  }
  return root;
}

}  // namespace

TEST(CpuQuota, ParsesCgroupV2CpuMax) {
  EXPECT_DOUBLE_EQ(*cpu_quota::parse_cpu_max("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*cpu_quota::parse_cpu_max("50000 100000"), 0.5);
  EXPECT_FALSE(cpu_quota::parse_cpu_max("max 100000\n"));
  EXPECT_FALSE(cpu_quota::parse_cpu_max(""));
  EXPECT_FALSE(cpu_quota::parse_cpu_max("garbage"));
  EXPECT_FALSE(cpu_quota::parse_cpu_max("100000 0"));
  EXPECT_FALSE(cpu_quota::parse_cpu_max("12x 100000"));
}

TEST(CpuQuota, ParsesCgroupV1Cfs) {
  EXPECT_DOUBLE_EQ(*cpu_quota::parse_cfs("200000\n", "100000\n"), 2.0);
  EXPECT_FALSE(cpu_quota::parse_cfs("-1\n", "100000\n"));  // no limit
  EXPECT_FALSE(cpu_quota::parse_cfs("abc", "100000"));
}

TEST(CpuQuota, ReadsV2BeforeV1AndNothingWhenAbsent) {
  fs::path v2 = fixture("v2", {{"cpu.max", "250000 100000\n"}, {"cpu/cpu.cfs_quota_us", "100000\n"},
                               {"cpu/cpu.cfs_period_us", "100000\n"}});
  EXPECT_DOUBLE_EQ(*cpu_quota::quota_cpus(v2.string()), 2.5);
  fs::path v1 = fixture("v1", {{"cpu/cpu.cfs_quota_us", "150000\n"}, {"cpu/cpu.cfs_period_us", "100000\n"}});
  EXPECT_DOUBLE_EQ(*cpu_quota::quota_cpus(v1.string()), 1.5);
  fs::path unlimited = fixture("max", {{"cpu.max", "max 100000\n"}});
  EXPECT_FALSE(cpu_quota::quota_cpus(unlimited.string()));
  fs::path none = fixture("none", {});
  EXPECT_FALSE(cpu_quota::quota_cpus(none.string()));
  for (const fs::path& p : {v2, v1, unlimited, none}) fs::remove_all(p);
}

TEST(CpuQuota, QuotaCapsTheAffinityCountRoundingUp) {
  EXPECT_EQ(cpu_quota::threads_for(64, 1.5), 2);
  EXPECT_EQ(cpu_quota::threads_for(64, 2.0), 2);
  EXPECT_EQ(cpu_quota::threads_for(64, 0.5), 1);
  EXPECT_EQ(cpu_quota::threads_for(2, 8.0), 2);
  EXPECT_EQ(cpu_quota::threads_for(4, std::nullopt), 4);
  EXPECT_EQ(cpu_quota::threads_for(0, std::nullopt), 1);
}

TEST(CpuQuota, DefaultThreadsHonoursOmpNumThreadsThenTheMachine) {
  const char* prev = std::getenv("OMP_NUM_THREADS");
  std::string saved = prev ? prev : "";
  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_num_threads(), 3);
  unsetenv("OMP_NUM_THREADS");
  int expected = cpu_quota::threads_for(cpu_quota::affinity_cpus(), cpu_quota::quota_cpus("/sys/fs/cgroup"));
  EXPECT_EQ(default_num_threads(), expected);
  EXPECT_LE(default_num_threads(), cpu_quota::affinity_cpus());
  if (prev) setenv("OMP_NUM_THREADS", saved.c_str(), 1);
}

// How many CPUs this process may use: the affinity mask capped by the cgroup
// CPU quota (containers, systemd slices). OpenMP's default counts the
// affinity mask only, so a container limited to 1.5 CPUs on a 64-core host
// started 64 spinning threads. The parsers take file contents so tests can
// feed fixtures.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ember::cpu_quota {

// cgroup v2 cpu.max: "<quota> <period>" or "max <period>" (no limit), in
// microseconds; returns quota / period CPUs, nullopt when unlimited or
// unreadable.
std::optional<double> parse_cpu_max(std::string_view text);
// cgroup v1 cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us.
std::optional<double> parse_cfs(std::string_view quota, std::string_view period);
// The quota under a cgroup file-system root (v2's cpu.max, else v1's cpu/
// cpu.cfs_*), nullopt when there is none.
std::optional<double> quota_cpus(const std::string& cgroup_root);
// min(affinity_cpus, ceil(quota)), at least 1.
int threads_for(int affinity_cpus, std::optional<double> quota);
// CPUs in this thread's sched_getaffinity mask (at least 1).
int affinity_cpus();

}  // namespace ember::cpu_quota

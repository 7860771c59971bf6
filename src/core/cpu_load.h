// How much of this process's CPUs other processes keep busy, from /proc/stat,
// and the thread count that leaves them their share (Note [adaptive thread
// count] in adaptive_threads.cpp). The parser and the rule are pure so tests
// can feed them fixtures.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ember::cpu_load {

// Busy and total clock ticks summed over some CPUs. Busy counts steal time: a
// hypervisor's other guests hold the CPU as surely as a neighbour process.
struct Ticks {
  uint64_t busy = 0;
  uint64_t total = 0;
};

// The "cpuN" lines of /proc/stat's text for N in `cpus` (the aggregate "cpu"
// line is skipped); nullopt when a listed CPU's line is missing or malformed.
std::optional<Ticks> parse_proc_stat(std::string_view text, const std::vector<int>& cpus);

// /proc/stat's text up to its first non-CPU line (the "intr" line alone can be
// tens of KiB on a large host); nullopt when it cannot be read.
std::optional<std::string> read_proc_stat_cpu_lines(const char* path = "/proc/stat");

// CPUs other processes kept busy between two readings: the busy share of
// `cpus` CPUs minus this process's own CPU use (in cores), never negative.
double other_cores(const Ticks& before, const Ticks& after, int cpus, double own_cores);

// The next thread count from the current one, the most the user allows
// (requested), the CPUs of the affinity mask and the other processes' load
// in cores. Drops when the free CPUs fall a third of a core short of the
// threads; rises only when a whole spare core (less a quarter for noise)
// appears, so a count does not flap at the boundary.
int next_thread_count(int current, int requested, int cpus, double other);

// The CPU numbers of this thread's affinity mask.
std::vector<int> affinity_cpu_list();

}  // namespace ember::cpu_load

#include "core/cpu_load.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace ember::cpu_load {
namespace {

// Parses "cpuN v1 v2 ..." into N and (busy, total); false when malformed.
bool parse_cpu_line(std::string_view line, int& cpu, Ticks& ticks) {
  if (line.size() < 4 || line.substr(0, 3) != "cpu") return false;
  const char* p = line.data() + 3;
  const char* end = line.data() + line.size();
  auto [q, ec] = std::from_chars(p, end, cpu);
  if (ec != std::errc() || q == p) return false;
  // user nice system idle iowait irq softirq steal: guest time is already in
  // user, so the first eight fields are the whole.
  std::array<uint64_t, 8> v{};
  size_t fields = 0;
  p = q;
  while (fields < v.size()) {
    while (p < end && *p == ' ') ++p;
    if (p == end) break;
    auto [r, ec2] = std::from_chars(p, end, v[fields]);
    if (ec2 != std::errc()) return false;
    p = r;
    ++fields;
  }
  if (fields < 4) return false;  // kernels before 2.6 had four fields; idle is the fourth
  uint64_t total = 0;
  for (size_t i = 0; i < fields; ++i) total += v[i];
  ticks.total = total;
  ticks.busy = total - v[3] - (fields > 4 ? v[4] : 0);  // idle and iowait
  return true;
}

}  // namespace

std::optional<Ticks> parse_proc_stat(std::string_view text, const std::vector<int>& cpus) {
  if (cpus.empty()) return std::nullopt;
  Ticks sum;
  size_t found = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] == ' ') continue;
    int cpu = -1;
    Ticks t;
    if (!parse_cpu_line(line, cpu, t)) return std::nullopt;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    sum.busy += t.busy;
    sum.total += t.total;
    ++found;
  }
  if (found != cpus.size()) return std::nullopt;
  return sum;
}

std::optional<std::string> read_proc_stat_cpu_lines(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  std::array<char, 4096> buf{};
  constexpr size_t kMaxBytes = 1 << 20;  // 8,000 CPUs' lines
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buf.data(), static_cast<size_t>(got));
    const size_t intr = text.find("\nintr ");
    if (intr != std::string::npos) {
      text.resize(intr + 1);
      break;
    }
    if (text.size() > kMaxBytes) break;
  }
  ::close(fd);
  return text;
}

double other_cores(const Ticks& before, const Ticks& after, int cpus, double own_cores) {
  if (after.total <= before.total || after.busy < before.busy) return 0.0;
  const double busy_share = static_cast<double>(after.busy - before.busy) /
                            static_cast<double>(after.total - before.total);
  return std::max(0.0, busy_share * cpus - own_cores);
}

int next_thread_count(int current, int requested, int cpus, double other) {
  requested = std::max(requested, 1);
  current = std::clamp(current, 1, requested);
  const double free = cpus - other;
  if (free < current - 0.35) return std::clamp(static_cast<int>(std::floor(free + 0.35)), 1, requested);
  if (free >= current + 0.75) return std::clamp(static_cast<int>(std::floor(free + 0.25)), current, requested);
  return current;
}

std::vector<int> affinity_cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace ember::cpu_load

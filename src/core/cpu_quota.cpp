#include "core/cpu_quota.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/cpu_load.h"

namespace ember::cpu_quota {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<long long> parse_int(std::string_view s) {
  s = trim(s);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> ratio(std::optional<long long> quota, std::optional<long long> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

// A small file's contents, nullopt when it cannot be read.
std::optional<std::string> slurp(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
  text = trim(text);
  size_t sp = text.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  std::string_view quota = text.substr(0, sp);
  if (quota == "max") return std::nullopt;
  return ratio(parse_int(quota), parse_int(text.substr(sp + 1)));
}

std::optional<double> parse_cfs(std::string_view quota, std::string_view period) {
  return ratio(parse_int(quota), parse_int(period));
}

std::optional<double> quota_cpus(const std::string& cgroup_root) {
  if (auto max = slurp(cgroup_root + "/cpu.max")) return parse_cpu_max(*max);
  auto q = slurp(cgroup_root + "/cpu/cpu.cfs_quota_us"), p = slurp(cgroup_root + "/cpu/cpu.cfs_period_us");
  if (q && p) return parse_cfs(*q, *p);
  return std::nullopt;
}

int threads_for(int affinity, std::optional<double> quota) {
  int n = std::max(affinity, 1);
  // 1.5 CPUs of quota: 2 threads (each gets 75% of a core, better than one
  // thread leaving half a CPU unused); 0.5: 1.
  if (quota) n = std::min(n, std::max(1, static_cast<int>(std::ceil(*quota - 1e-9))));
  return n;
}

int affinity_cpus() { return std::max(static_cast<int>(cpu_load::affinity_cpu_list().size()), 1); }

}  // namespace ember::cpu_quota

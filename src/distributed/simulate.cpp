// The data-parallel cost model (docs/distributed.md).
#include "ember/distributed/simulate.h"

#include <algorithm>

#include "ember/core/error.h"

namespace ember::distributed {

double ring_allreduce_s(int64_t bytes, int ranks, const LinkModel& link) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  const double bytes_per_s = link.gbit_per_s * 1e9 / 8.0;
  return 2.0 * (n - 1.0) / n * static_cast<double>(bytes) / bytes_per_s + 2.0 * (n - 1.0) * link.latency_s;
}

SimulatedStep simulate_step(const StepTimeline& t, int ranks, const LinkModel& link, double first_cap_mb,
                            double cap_mb) {
  EMBER_CHECK(t.param_bytes.size() == t.param_ready_s.size(), "simulate_step: {} parameter sizes for {} times",
              t.param_bytes.size(), t.param_ready_s.size());
  EMBER_CHECK(ranks >= 1 && link.gbit_per_s > 0, "simulate_step: ranks {} and bandwidth {} Gbit/s must be positive",
              ranks, link.gbit_per_s);
  // Buckets in reverse parameter order: (bytes, ready = last arrival).
  std::vector<std::pair<int64_t, double>> buckets;
  int64_t bytes = 0;
  double ready = 0, limit = first_cap_mb * 1024 * 1024;
  for (size_t k = t.param_bytes.size(); k-- > 0;) {
    bytes += t.param_bytes[k];
    ready = std::max(ready, t.param_ready_s[k]);
    if (static_cast<double>(bytes) >= limit) {
      buckets.emplace_back(bytes, ready);
      bytes = 0;
      ready = 0;
      limit = cap_mb * 1024 * 1024;
    }
  }
  if (bytes > 0) buckets.emplace_back(bytes, ready);
  SimulatedStep s;
  s.buckets = static_cast<int64_t>(buckets.size());
  double end = 0;
  for (const auto& [b, r] : buckets) {
    const double c = ring_allreduce_s(b, ranks, link);
    end = std::max(end, r) + c;
    s.comm_s += c;
  }
  const double backward = std::max(t.backward_s, end);
  s.exposed_s = backward - t.backward_s;
  s.step_s = t.forward_s + backward + t.optimizer_s;
  s.efficiency = (t.forward_s + t.backward_s + t.optimizer_s) / s.step_s;
  return s;
}

}  // namespace ember::distributed

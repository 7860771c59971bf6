// The data-parallel cost model of docs/distributed.md: a measured
// single-rank step (forward, the arrival time of each gradient during
// backward, optimizer) replayed with modeled ring-allreduce communication
// for N ranks, as in the DDP paper (Li et al., VLDB 2020).
#pragma once

#include <cstdint>
#include <vector>

namespace ember::distributed {

struct StepTimeline {
  double forward_s = 0;
  double backward_s = 0;  // from backward() to its last node
  double optimizer_s = 0;
  // Per parameter in registration order: bytes, and when its gradient
  // arrived (seconds after backward started).
  std::vector<int64_t> param_bytes;
  std::vector<double> param_ready_s;
};

struct LinkModel {
  double gbit_per_s = 25;
  double latency_s = 5e-6;  // per ring step
};

struct SimulatedStep {
  double step_s = 0;        // forward + max(backward, last allreduce) + optimizer
  double comm_s = 0;        // sum of the buckets' allreduce times
  double exposed_s = 0;     // communication after backward's end
  double efficiency = 0;    // single-rank step / simulated step (weak scaling)
  int64_t buckets = 0;
};

// Ring allreduce of `bytes` over `ranks`: 2(N-1)/N x bytes / bandwidth plus
// 2(N-1) latencies.
double ring_allreduce_s(int64_t bytes, int ranks, const LinkModel& link);

// Buckets as DistributedDataParallel forms them (reverse order, the first
// capped at first_cap_mb, the others at cap_mb); each starts when its last
// gradient has arrived and the previous bucket is done.
SimulatedStep simulate_step(const StepTimeline& t, int ranks, const LinkModel& link, double first_cap_mb = 1.0,
                            double cap_mb = 25.0);

}  // namespace ember::distributed

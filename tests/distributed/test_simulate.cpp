// The cost model of docs/distributed.md against hand-computed values.
#include "ember/distributed/simulate.h"

#include <gtest/gtest.h>

namespace ember::distributed {
namespace {

TEST(Simulate, RingAllreduceCost) {
  LinkModel link{8.0, 1e-6};  // 8 Gbit/s = 1e9 bytes/s
  EXPECT_DOUBLE_EQ(ring_allreduce_s(1000000, 1, link), 0.0);
  // 2 (N-1)/N x bytes / bandwidth + 2 (N-1) latencies.
  EXPECT_NEAR(ring_allreduce_s(1000000, 2, link), 1e-3 + 2e-6, 1e-12);
  EXPECT_NEAR(ring_allreduce_s(1000000, 4, link), 1.5e-3 + 6e-6, 1e-12);
}

TEST(Simulate, BucketsOverlapBackwardAndQueueBehindEachOther) {
  // Three parameters of 1 MiB (registration order); backward produces them
  // in reverse: p2 at 1 ms, p1 at 5 ms, p0 at 9 ms; backward ends at 10 ms.
  StepTimeline t;
  t.forward_s = 0.004;
  t.backward_s = 0.010;
  t.optimizer_s = 0.001;
  const int64_t mib = 1 << 20;
  t.param_bytes = {mib, mib, mib};
  t.param_ready_s = {0.009, 0.005, 0.001};
  LinkModel link{8.0 * mib / 1e9 * 1000, 0.0};  // 1 MiB per ms: a 2-rank allreduce of 1 MiB takes 1 ms
  SimulatedStep s = simulate_step(t, 2, link, 1.0, 1.0);
  EXPECT_EQ(s.buckets, 3);
  // Buckets end at 2, 6 and 10 ms: all hidden but the last, which ends with backward.
  EXPECT_NEAR(s.comm_s, 0.003, 1e-12);
  EXPECT_NEAR(s.exposed_s, 0.0, 1e-12);
  EXPECT_NEAR(s.step_s, 0.015, 1e-12);
  // One bucket of 3 MiB starts at 9 ms and ends at 12 ms: 2 ms exposed.
  SimulatedStep one = simulate_step(t, 2, link, 100.0, 100.0);
  EXPECT_EQ(one.buckets, 1);
  EXPECT_NEAR(one.exposed_s, 0.002, 1e-12);
  EXPECT_NEAR(one.efficiency, 0.015 / 0.017, 1e-12);
  // A slow link: buckets queue behind each other (2, 4 ms each).
  LinkModel slow{link.gbit_per_s / 4, 0.0};
  SimulatedStep q = simulate_step(t, 2, slow, 1.0, 1.0);
  // 1 + 4 = 5, max(5, 5) + 4 = 9, max(9, 9) + 4 = 13 ms: 3 ms exposed.
  EXPECT_NEAR(q.exposed_s, 0.003, 1e-12);
}

}  // namespace
}  // namespace ember::distributed

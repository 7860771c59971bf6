// The core's parallel primitives beyond parallel_for: a team whose phases
// meet at barriers, the thread-limit guard, and the measured region cost.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "ember/core/parallel.h"

namespace ember {
namespace {

TEST(ParallelTeam, EveryThreadSeesEveryFirstPhaseWriteAfterTheBarrier) {
  const int before = get_num_threads();
  set_num_threads(2);
  std::vector<int> first(2, 0), seen(2, -1);
  int team_size = 0;
  parallel_team(2, [&](int tid, int team) {
    if (tid == 0) team_size = team;
    first[static_cast<size_t>(tid)] = tid + 1;
    team_barrier();
    int sum = 0;
    for (int t = 0; t < team; ++t) sum += first[static_cast<size_t>(t)];
    seen[static_cast<size_t>(tid)] = sum;
  });
  ASSERT_GE(team_size, 1);
  const int want = team_size == 2 ? 3 : 1;
  for (int t = 0; t < team_size; ++t) EXPECT_EQ(seen[static_cast<size_t>(t)], want) << "thread " << t;
  set_num_threads(before);
}

TEST(ParallelTeam, OneThreadAndNestedTeamsRunInline) {
  std::atomic<int> calls{0};
  parallel_team(1, [&](int tid, int team) {
    EXPECT_EQ(tid, 0);
    EXPECT_EQ(team, 1);
    team_barrier();  // a team of one passes its barrier
    ++calls;
  });
  parallel_team(2, [&](int, int) { parallel_team(2, [&](int, int team) { EXPECT_EQ(team, 1); }); });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ParallelTeam, AnExceptionAfterTheLastBarrierReachesTheCaller) {
  EXPECT_THROW(parallel_team(2, [](int tid, int) {
                 team_barrier();
                 if (tid == 0) throw std::runtime_error("from the team");
               }),
               std::runtime_error);
}

TEST(ThreadLimitGuard, LimitsRegionsOnThisThreadAndRestores) {
  const int before = get_num_threads();
  set_num_threads(2);
  {
    const ThreadLimitGuard one(1);
    EXPECT_EQ(get_num_threads(), 1);
    int teams = 0;
    parallel_team(2, [&](int, int team) { teams = team; });
    EXPECT_EQ(teams, 1);
    const ThreadLimitGuard more(4);  // a guard never raises the count
    EXPECT_EQ(get_num_threads(), 1);
  }
  EXPECT_EQ(get_num_threads(), 2);
  EXPECT_THROW(ThreadLimitGuard(0), std::exception);
  set_num_threads(before);
}

TEST(ParallelRegionCost, IsMeasuredOnceAndPlausible) {
  const double cost = parallel_region_cost_us();
  // A fork and a join take at least 50 ns anywhere (a region elided by the
  // compiler once measured 0.03 µs here).
  EXPECT_GE(cost, 0.05);
  EXPECT_LE(cost, 50.0);  // the cap: a loaded machine's figure must not stop every later split
  EXPECT_EQ(parallel_region_cost_us(), cost);
}

}  // namespace
}  // namespace ember

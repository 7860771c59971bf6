// Collectives on tensors: values for any world size (ctest runs this file
// under mpirun -np 2 and alone).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "dist_util.h"
#include "test_util.h"

namespace ember {
namespace {

using distributed::ReduceOp;
using ember_test::world;

TEST(Collectives, AllReduceSumAvgMaxFloat) {
  const auto& pg = world();
  const int r = pg->rank(), n = pg->size();
  // 7 elements: blocks of unequal length for the ring.
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max}) {
    Tensor t = arange(7, kFloat32) + static_cast<double>(10 * r);
    pg->all_reduce(t, op);
    std::vector<double> expected;
    for (int i = 0; i < 7; ++i) {
      double sum = n * i + 10.0 * n * (n - 1) / 2;
      expected.push_back(op == ReduceOp::Sum ? sum : op == ReduceOp::Avg ? sum / n : i + 10.0 * (n - 1));
    }
    testing::expect_values(t, {7}, expected, 0, 0);
  }
}

TEST(Collectives, AllReduceInt64AndTinyTensors) {
  const auto& pg = world();
  const int r = pg->rank(), n = pg->size();
  Tensor t = full({3}, int64_t{1} << 40, kInt64) + static_cast<int64_t>(r);
  pg->all_reduce(t, ReduceOp::Sum);
  for (int64_t v : t.to_vector<int64_t>()) EXPECT_EQ(v, (int64_t{1} << 40) * n + int64_t{n} * (n - 1) / 2);
  // Fewer elements than ranks: empty ring blocks.
  Tensor one = full({1}, 2.0 + r, kFloat64);
  pg->all_reduce(one, ReduceOp::Max);
  EXPECT_EQ(one.item<double>(), 2.0 + (n - 1));
}

TEST(Collectives, BroadcastFromLastRank) {
  const auto& pg = world();
  const int root = pg->size() - 1;
  Tensor t = full({2, 3}, static_cast<double>(pg->rank()), kFloat32);
  pg->broadcast(t, root);
  testing::expect_values(t, {2, 3}, std::vector<double>(6, root), 0, 0);
}

TEST(Collectives, AllGatherAndReduceScatter) {
  const auto& pg = world();
  const int r = pg->rank(), n = pg->size();
  Tensor in = tensor({double(r), r + 0.5}, {2}, kFloat32);
  Tensor out = zeros({2 * n}, kFloat32);
  pg->all_gather(out, in);
  std::vector<double> gathered;
  for (int k = 0; k < n; ++k) gathered.insert(gathered.end(), {double(k), k + 0.5});
  testing::expect_values(out, {2 * n}, gathered, 0, 0);

  // Block b, element j of rank k: k + 10 b + j; rank r receives block r summed.
  Tensor big = zeros({n, 3}, kFloat64);
  for (int b = 0; b < n; ++b)
    for (int j = 0; j < 3; ++j) big.index({b, j}).fill_(r + 10.0 * b + j);
  Tensor before = big.clone();
  Tensor mine = zeros({3}, kFloat64);
  pg->reduce_scatter(mine, big, ReduceOp::Sum);
  std::vector<double> expected;
  for (int j = 0; j < 3; ++j) expected.push_back(n * (n - 1) / 2.0 + n * (10.0 * r + j));
  testing::expect_values(mine, {3}, expected, 0, 0);
  EXPECT_TRUE(equal(big, before)) << "reduce_scatter must leave its input unchanged";
  pg->reduce_scatter(mine, big, ReduceOp::Avg);
  for (double& e : expected) e /= n;
  testing::expect_values(mine, {3}, expected, 1e-15, 0);
}

TEST(Collectives, AsyncWorksCompleteInAnyWaitOrder) {
  const auto& pg = world();
  const int n = pg->size();
  std::vector<Tensor> ts;
  std::vector<distributed::WorkPtr> works;
  for (int k = 0; k < 4; ++k) {
    ts.push_back(full({1000}, static_cast<double>(k + pg->rank()), kFloat32));
    works.push_back(pg->all_reduce_async(ts.back(), ReduceOp::Sum));
  }
  works.push_back(pg->barrier_async());
  for (auto it = works.rbegin(); it != works.rend(); ++it) (*it)->wait();
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(works[static_cast<size_t>(k)]->is_completed());
    EXPECT_EQ(ts[static_cast<size_t>(k)].max().item<float>(), static_cast<float>(k * n + n * (n - 1) / 2));
    EXPECT_EQ(ts[static_cast<size_t>(k)].min().item<float>(), static_cast<float>(k * n + n * (n - 1) / 2));
  }
}

// The same sum twice is bitwise the same, and every rank holds the same bits.
TEST(Collectives, SumIsBitwiseRepeatableAndEqualOnAllRanks) {
  const auto& pg = world();
  Generator gen(1234 + static_cast<uint64_t>(pg->rank()));
  Tensor x = randn({100003}, kFloat32, &gen);
  Tensor a = x.clone(), b = x.clone();
  pg->all_reduce(a, ReduceOp::Sum);
  pg->all_reduce(b, ReduceOp::Sum);
  ASSERT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0);
  Tensor all = zeros({pg->size(), 100003}, kFloat32);
  pg->all_gather(all, a);
  for (int k = 0; k < pg->size(); ++k)
    EXPECT_EQ(std::memcmp(all[k].contiguous().data_ptr(), a.data_ptr(), a.nbytes()), 0) << "rank " << k;
}

TEST(Collectives, BadArgumentsRaiseNamingTheOp) {
  const auto& pg = world();
  Tensor m = zeros({3, 4});
  testing::expect_error([&] { pg->all_reduce(m.t(), ReduceOp::Sum); }, {"all_reduce", "not contiguous", "[4, 3]"});
  testing::expect_error([&] { pg->all_reduce(zeros({2}, kInt64), ReduceOp::Avg); }, {"all_reduce", "avg", "int64"});
  testing::expect_error([&] { pg->all_gather(zeros({pg->size() * 2 + 1}), zeros({2})); },
                        {"all_gather", "output has", "world size"});
  testing::expect_error([&] { pg->broadcast(zeros({2}), pg->size()); }, {"broadcast", "root"});
  testing::expect_error([&] { pg->all_reduce(zeros({2}, kBFloat16), ReduceOp::Sum); }, {"all_reduce", "bfloat16"});
  // The group still works after rejected calls (nothing was queued).
  Tensor t = ones({2});
  pg->all_reduce(t, ReduceOp::Sum);
  EXPECT_EQ(t.sum().item<float>(), 2.0f * pg->size());
}

// Ember's collectives run on a duplicate of MPI_COMM_WORLD: a user's pending
// receive on MPI_COMM_WORLD (any source, any tag) is not matched by them.
TEST(CollectivesMpi, UserTagsDoNotCollide) {
  const auto& pg = world();
  ASSERT_EQ(pg->backend(), "mpi");
  int r = pg->rank(), n = pg->size();
  int got = -1;
  MPI_Request req;
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
  Tensor t = full({64}, 1.0f, kFloat32);
  pg->all_reduce(t, ReduceOp::Sum);
  pg->barrier();
  int done = 0;
  MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  EXPECT_EQ(done, 0) << "an Ember message reached the user's MPI_COMM_WORLD receive";
  // Every rank has tested before any user message is sent (collectives use
  // their own context: the barrier cannot match the receive either).
  MPI_Barrier(MPI_COMM_WORLD);
  int mine = 100 + r;
  MPI_Send(&mine, 1, MPI_INT, (r + 1) % n, 0, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  EXPECT_EQ(got, 100 + (r + n - 1) % n);
  EXPECT_EQ(t.sum().item<float>(), 64.0f * n);
}

// EMBER_DIST=off gives the world of one rank even under a launcher (MPI is
// not touched); bad values and backends are named.
TEST(CollectivesLocal, InitProcessGroupHonoursEmberDist) {
  EXPECT_EQ(distributed::launched_by_mpi(), world()->backend() == "mpi");
  ::setenv("EMBER_DIST", "off", 1);
  auto pg = distributed::init_process_group("mpi");
  EXPECT_EQ(pg->backend(), "local");
  EXPECT_EQ(pg->size(), 1);
  ::setenv("EMBER_DIST", "gloo", 1);
  testing::expect_error([] { distributed::init_process_group("mpi"); }, {"EMBER_DIST", "'off' or 'mpi'", "gloo"});
  ::unsetenv("EMBER_DIST");
  testing::expect_error([] { distributed::init_process_group("nccl"); }, {"unknown backend 'nccl'", "'mpi'"});
}

// A task of `srun -n 2` without PMI (srun --mpi=none; Debian's OpenMPI needs
// --mpi=pmix) must not train alone as a world of one: it counts as launched
// and init_process_group refuses it before MPI_Init, naming the fix. Runs
// alone and under mpirun: the launcher's variables are hidden meanwhile.
TEST(CollectivesLocal, SrunStepWithoutPmiIsRefusedNotAWorldOfOne) {
  const char* hidden[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                          "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* var : hidden)
    if (const char* v = std::getenv(var)) saved.emplace_back(var, v);
  for (const char* var : hidden) ::unsetenv(var);

  ::setenv("SLURM_STEP_NUM_TASKS", "1", 1);  // srun -n 1: a single process
  EXPECT_FALSE(distributed::launched_by_mpi());
  ::setenv("SLURM_STEP_NUM_TASKS", "2", 1);
  ::setenv("SLURM_PROCID", "1", 1);
  EXPECT_TRUE(distributed::launched_by_mpi());
  testing::expect_error([] { distributed::init_process_group("mpi"); },
                        {"srun started this job step with 2 tasks (this is task 1) but gave them no PMI",
                         "srun --mpi=pmix -n 2", "srun --mpi=list"});
  ::setenv("SLURM_STEP_NUM_TASKS", "two", 1);
  testing::expect_error([] { distributed::init_process_group("mpi"); }, {"SLURM_STEP_NUM_TASKS", "'two'"});
  // mpirun inside an allocation: its ranks may inherit a step's variables,
  // and mpirun's world is the one that counts.
  ::setenv("SLURM_STEP_NUM_TASKS", "1", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_TRUE(distributed::launched_by_mpi());

  for (const char* var : hidden) ::unsetenv(var);
  for (const auto& [var, v] : saved) ::setenv(var.c_str(), v.c_str(), 1);
}

TEST(CollectivesLocal, WithoutLauncherTheWorldIsOneRank) {
  auto pg = distributed::local_process_group();
  EXPECT_EQ(pg->rank(), 0);
  EXPECT_EQ(pg->size(), 1);
  Tensor t = tensor({1.0, 2.0}, {2}, kFloat32);
  pg->all_reduce(t, ReduceOp::Avg);
  testing::expect_values(t, {2}, {1, 2}, 0, 0);
  Tensor out = zeros({2});
  pg->all_gather(out, t);
  testing::expect_values(out, {2}, {1, 2}, 0, 0);
  pg->barrier();
}

}  // namespace
}  // namespace ember

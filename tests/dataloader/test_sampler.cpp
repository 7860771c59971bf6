// Samplers: seeded reproducibility, epochs, weights, batching, distributed partitions.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "ember/data/data.h"
#include "test_util.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;

namespace {
bool is_permutation_of_range(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return v == r;
}
}  // namespace

TEST(DataSampler, Sequential) {
  SequentialSampler s(4);
  EXPECT_EQ(s.size(), 4);
  EXPECT_EQ(s.indices(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(DataSampler, RandomSameSeedSameOrderNewEpochNewOrder) {
  RandomSampler a(100, false, -1, 7), b(100, false, -1, 7), c(100, false, -1, 8);
  std::vector<int64_t> e0 = a.indices();
  EXPECT_TRUE(is_permutation_of_range(e0, 100));
  EXPECT_EQ(e0, b.indices());    // same seed, same epoch
  EXPECT_NE(e0, c.indices());    // other seed
  EXPECT_EQ(e0, a.indices());    // indices() is a pure function of (seed, epoch)
  a.set_epoch(1);
  std::vector<int64_t> e1 = a.indices();
  EXPECT_TRUE(is_permutation_of_range(e1, 100));
  EXPECT_NE(e0, e1);
  a.set_epoch(0);
  EXPECT_EQ(a.indices(), e0);  // resuming at an epoch repeats it
}

TEST(DataSampler, RandomWithReplacementAndNumSamples) {
  RandomSampler r(5, true, 1000, 3);
  std::vector<int64_t> v = r.indices();
  ASSERT_EQ(v.size(), 1000u);
  std::map<int64_t, int> counts;
  for (int64_t i : v) {
    ASSERT_TRUE(i >= 0 && i < 5);
    ++counts[i];
  }
  EXPECT_EQ(counts.size(), 5u);
  for (auto& [i, n] : counts) EXPECT_GT(n, 140) << i;  // expected 200 each
  // Without replacement, 12 of 5: two whole permutations then 2 more.
  RandomSampler w(5, false, 12, 3);
  std::vector<int64_t> x = w.indices();
  ASSERT_EQ(x.size(), 12u);
  EXPECT_TRUE(is_permutation_of_range({x.begin(), x.begin() + 5}, 5));
  EXPECT_TRUE(is_permutation_of_range({x.begin() + 5, x.begin() + 10}, 5));
}

TEST(DataSampler, SubsetRandom) {
  SubsetRandomSampler s({10, 20, 30, 40}, 1);
  std::vector<int64_t> v = s.indices();
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<int64_t>{10, 20, 30, 40}));
}

TEST(DataSampler, WeightedRandomFollowsWeights) {
  // Class imbalance: weights 1:3, draws with replacement land ~25% / ~75%.
  WeightedRandomSampler s({1, 3, 0}, 20000, true, 5);
  std::vector<int64_t> v = s.indices();
  int64_t ones = std::count(v.begin(), v.end(), 1), twos = std::count(v.begin(), v.end(), 2);
  EXPECT_EQ(twos, 0);  // zero weight is never drawn
  EXPECT_NEAR(static_cast<double>(ones) / 20000.0, 0.75, 0.02);
  // Without replacement: distinct indices, never the zero-weight one.
  WeightedRandomSampler w({1, 1, 0, 5, 2}, 4, false, 5);
  std::vector<int64_t> u = w.indices();
  std::set<int64_t> distinct(u.begin(), u.end());
  EXPECT_EQ(distinct, (std::set<int64_t>{0, 1, 3, 4}));
  expect_error([] { WeightedRandomSampler({1, 0}, 2, false); }, {"only 1 weights are positive"});
  expect_error([] { WeightedRandomSampler({1, -1}, 2); }, {"weights[1] = -1"});
}

TEST(DataSampler, BatchSampler) {
  auto seq = std::make_shared<SequentialSampler>(10);
  BatchSampler keep(seq, 4, false), drop(seq, 4, true);
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  EXPECT_EQ(keep.batches().back(), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(drop.batches().back(), (std::vector<int64_t>{4, 5, 6, 7}));
  expect_error([&] { BatchSampler(seq, 0, false); }, {"batch_size should be a positive integer"});
}

TEST(DataSampler, DistributedPartitionsCoverEachIndexOncePerEpoch) {
  const int64_t n = 120, world = 4;
  std::vector<int64_t> previous;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> all;
    for (int64_t rank = 0; rank < world; ++rank) {
      DistributedSampler s(n, world, rank, true, 11);
      s.set_epoch(epoch);
      EXPECT_EQ(s.size(), 30);
      std::vector<int64_t> mine = s.indices();
      EXPECT_EQ(static_cast<int64_t>(mine.size()), s.size());
      all.insert(all.end(), mine.begin(), mine.end());
    }
    EXPECT_TRUE(is_permutation_of_range(all, n)) << "epoch " << epoch;
    if (epoch > 0) {
      EXPECT_NE(all, previous);  // reshuffled
    }
    previous = all;
  }
}

TEST(DataSampler, DistributedPaddingAndDropLast) {
  // n = 10, 4 ranks: PyTorch pads to 12 by repeating the first 2 indices, or
  // with drop_last keeps 8 (2 per rank).
  std::vector<int64_t> padded, dropped;
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler p(10, 4, rank, false);
    DistributedSampler d(10, 4, rank, false, 0, true);
    EXPECT_EQ(p.size(), 3);
    EXPECT_EQ(d.size(), 2);
    auto pi = p.indices(), di = d.indices();
    padded.insert(padded.end(), pi.begin(), pi.end());
    dropped.insert(dropped.end(), di.begin(), di.end());
  }
  // torch: list(DistributedSampler(range(10), 4, 1, shuffle=False)) == [1, 5, 9]
  EXPECT_EQ(DistributedSampler(10, 4, 1, false).indices(), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(DistributedSampler(10, 4, 3, false).indices(), (std::vector<int64_t>{3, 7, 1}));
  std::sort(padded.begin(), padded.end());
  EXPECT_EQ(padded, (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(is_permutation_of_range(dropped, 8));
  expect_error([] { DistributedSampler(10, 4, 4); }, {"invalid rank 4", "[0, 3]"});
}

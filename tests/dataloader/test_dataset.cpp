// Dataset, TensorDataset, Subset, ConcatDataset, random_split, CachedDataset, Sample.
#include <atomic>
#include <set>

#include "ember/data/data.h"
#include "test_util.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {
// Sample i is the 0-dim int64 tensor i; counts gets.
class Range : public Dataset {
 public:
  explicit Range(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  Sample get(int64_t i) const override {
    ++gets;
    return Sample(scalar_tensor(i, kInt64));
  }
  mutable std::atomic<int64_t> gets{0};

 private:
  int64_t n_;
};
}  // namespace

TEST(DataDataset, TensorDatasetReturnsRowTuples) {
  auto ds = std::make_shared<TensorDataset>(
      std::vector<Tensor>{arange(6).reshape({3, 2}), tensor<int64_t>({7, 8, 9})});
  EXPECT_EQ(ds->size(), 3);
  Sample s = ds->get(1);
  ASSERT_TRUE(s.is_tuple());
  expect_values(s[0].tensor(), {2}, {2, 3});
  expect_values(s[1].tensor(), {}, {8});
  expect_error([&] { (void)ds->get(3); }, {"TensorDataset", "index 3", "size 3"});
  expect_error([&] { TensorDataset({zeros({3}), zeros({4})}); },
               {"size mismatch", "3 samples", "tensor 1 has 4"});
}

TEST(DataDataset, SubsetAndConcat) {
  auto base = std::make_shared<Range>(5);
  auto sub = std::make_shared<Subset>(base, std::vector<int64_t>{4, 0, 2});
  EXPECT_EQ(sub->size(), 3);
  EXPECT_EQ(sub->get(0).tensor().item<int64_t>(), 4);
  EXPECT_EQ(sub->get(2).tensor().item<int64_t>(), 2);
  expect_error([&] { Subset(base, {5}); }, {"indices[0] = 5", "size 5"});
  ConcatDataset cat({base, sub, std::make_shared<Range>(0), std::make_shared<Range>(2)});
  EXPECT_EQ(cat.size(), 10);
  std::vector<int64_t> got;
  for (int64_t i = 0; i < cat.size(); ++i) got.push_back(cat.get(i).tensor().item<int64_t>());
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 2, 3, 4, 4, 0, 2, 0, 1}));
  expect_error([&] { (void)cat.get(10); }, {"ConcatDataset", "index 10"});
}

TEST(DataDataset, RandomSplitIsSeededAndDisjoint) {
  auto base = std::make_shared<Range>(10);
  auto a = random_split(base, std::vector<int64_t>{7, 3}, 42);
  auto b = random_split(base, std::vector<int64_t>{7, 3}, 42);
  auto c = random_split(base, std::vector<int64_t>{7, 3}, 43);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0]->indices(), b[0]->indices());
  EXPECT_NE(a[0]->indices(), c[0]->indices());
  std::set<int64_t> all(a[0]->indices().begin(), a[0]->indices().end());
  all.insert(a[1]->indices().begin(), a[1]->indices().end());
  EXPECT_EQ(all.size(), 10u);
  // Fractions: floor(10 * 0.33) = 3 three times, remainder 1 to the first.
  auto f = random_split(base, std::vector<double>{0.34, 0.33, 0.33}, 1);
  EXPECT_EQ(f[0]->size(), 4);
  EXPECT_EQ(f[1]->size(), 3);
  EXPECT_EQ(f[2]->size(), 3);
  expect_error([&] { random_split(base, std::vector<int64_t>{5, 4}); },
               {"sum of input lengths (9)", "(10)"});
}

TEST(DataDataset, CachedDatasetLoadsEachSampleOnce) {
  auto base = std::make_shared<Range>(4);
  auto cached = std::make_shared<CachedDataset>(base);
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(cached->get(i).tensor().item<int64_t>(), i);
  EXPECT_EQ(base->gets.load(), 4);
  EXPECT_EQ(cached->cached_count(), 4);
  // Through a multi-worker loader too.
  auto base2 = std::make_shared<Range>(64);
  auto cached2 = std::make_shared<CachedDataset>(base2);
  DataLoader loader(cached2, DataLoaderOptions().with_batch_size(8).with_num_workers(4));
  for (int epoch = 0; epoch < 3; ++epoch)
    for (auto& batch : loader) (void)batch;
  EXPECT_LE(base2->gets.load(), 64 + 4);  // at most one duplicate per racing worker
  EXPECT_EQ(cached2->cached_count(), 64);
}

TEST(DataDataset, SampleStructure) {
  Sample m = Sample::map({{"x", Sample(ones({2}))}, {"y", Sample(zeros({}))}});
  EXPECT_TRUE(m.is_map());
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("x").tensor().numel(), 2);
  EXPECT_EQ(m.describe(), "{x: Tensor[2] float32, y: Tensor[] float32}");
  expect_error([&] { (void)m.at("z"); }, {"no field 'z'", "[x, y]"});
  expect_error([&] { (void)m.tensor(); }, {"expected a tensor sample"});
  expect_error([&] { Sample::map({{"a", Sample()}, {"a", Sample()}}); }, {"duplicate key 'a'"});
}

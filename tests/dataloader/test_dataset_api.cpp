// PyTorch's spellings of the data API: TensorDataset(X, y), random_split with
// braced fractions or lengths, and `auto [x, y] = batch`.
#include <numeric>
#include <set>

#include "ember/data/data.h"
#include "test_util.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

std::vector<int64_t> sizes_of(const std::vector<std::shared_ptr<Subset>>& parts) {
  std::vector<int64_t> out;
  for (const auto& p : parts) out.push_back(p->size());
  return out;
}

// Every index of [0, n) exactly once over the parts.
void expect_partition(const std::vector<std::shared_ptr<Subset>>& parts, int64_t n) {
  std::set<int64_t> seen;
  for (const auto& p : parts)
    for (int64_t i : p->indices()) EXPECT_TRUE(seen.insert(i).second) << "index " << i << " twice";
  EXPECT_EQ(static_cast<int64_t>(seen.size()), n);
}

}  // namespace

TEST(DataApi, TensorDatasetTakesTheTensorsAsArguments) {
  Tensor X = arange(12).reshape({6, 2}).to(kFloat32);
  Tensor y = arange(6);
  auto ds = std::make_shared<TensorDataset>(X, y);
  EXPECT_EQ(ds->size(), 6);
  ASSERT_EQ(ds->tensors().size(), 2u);
  auto [x3, y3] = ds->get(3);
  expect_values(x3, {2}, {6, 7});
  EXPECT_EQ(y3.item<int64_t>(), 3);
  EXPECT_EQ(TensorDataset({X, y}).size(), 6);  // the braced forms still work
  EXPECT_EQ((TensorDataset{X, y}).tensors().size(), 2u);
  TensorDataset three(X, y, y * 10);
  expect_values(three.get(5)[2].tensor(), {}, {50});
  expect_error([&] { TensorDataset(X, arange(5)); }, {"tensor 0 has 6 samples", "tensor 1 has 5"});
}

TEST(DataApi, BatchesBindAsInputAndTarget) {
  Tensor X = arange(10).reshape({5, 2}).to(kFloat32);
  auto ds = std::make_shared<TensorDataset>(X, arange(5));
  DataLoader loader(ds, DataLoaderOptions{}.with_batch_size(2));
  std::vector<int64_t> targets;
  int64_t rows = 0;
  for (auto& [x, y] : loader) {
    EXPECT_EQ(x.size(1), 2);
    EXPECT_EQ(x.size(0), y.size(0));
    rows += x.size(0);
    for (int64_t t : y.to_vector<int64_t>()) targets.push_back(t);
  }
  EXPECT_EQ(rows, 5);
  EXPECT_EQ(targets, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // const binding, and a binding that writes through to the sample.
  const Sample s = ds->get(4);
  const auto& [cx, cy] = s;
  expect_values(cx, {2}, {8, 9});
  Sample m = ds->get(0);
  auto& [mx, my] = m;
  mx = zeros({2});
  expect_values(m[0].tensor(), {2}, {0, 0});
  (void)cy;
  (void)my;
  // Anything but a pair of tensors raises when bound.
  expect_error([] { auto [a, b] = Sample(zeros({2})); (void)a; (void)b; }, {"expected a tuple of two tensors",
                                                                             "Tensor[2]"});
  expect_error([&] { auto [a, b] = TensorDataset(X).get(0); (void)a; (void)b; },
               {"expected a tuple of two tensors"});
}

TEST(DataApi, RandomSplitTakesBracedFractionsOrLengths) {
  auto ds = std::make_shared<TensorDataset>(arange(10));
  auto by_fraction = random_split(ds, {0.8, 0.2});
  EXPECT_EQ(sizes_of(by_fraction), (std::vector<int64_t>{8, 2}));
  expect_partition(by_fraction, 10);
  auto by_length = random_split(ds, {7, 3}, 5);
  EXPECT_EQ(sizes_of(by_length), (std::vector<int64_t>{7, 3}));
  expect_partition(by_length, 10);
  // Same seed, same split, whichever form names it.
  EXPECT_EQ(random_split(ds, {0.7, 0.3}, 5)[0]->indices(), by_length[0]->indices());
  // PyTorch's rule: floor(n * f) each, then the remainder one by one from
  // the first subset: 11 * [0.5, 0.3, 0.2] -> [5, 3, 2] + 1 -> [6, 3, 2];
  // 5 * [0.25] * 4 -> [1, 1, 1, 1] + 1 -> [2, 1, 1, 1]; 7 * [0.5, 0.5] ->
  // [3, 3] + 1 -> [4, 3].
  auto eleven = std::make_shared<TensorDataset>(arange(11));
  EXPECT_EQ(sizes_of(random_split(eleven, {0.5, 0.3, 0.2})), (std::vector<int64_t>{6, 3, 2}));
  auto five = std::make_shared<TensorDataset>(arange(5));
  EXPECT_EQ(sizes_of(random_split(five, {0.25, 0.25, 0.25, 0.25})), (std::vector<int64_t>{2, 1, 1, 1}));
  auto seven = std::make_shared<TensorDataset>(arange(7));
  EXPECT_EQ(sizes_of(random_split(seven, {0.5, 0.5})), (std::vector<int64_t>{4, 3}));
  expect_error([&] { random_split(ds, {6, 3}); }, {"sum of input lengths (9)", "(10)"});
  expect_error([&] { random_split(ds, {0.5, 0.4}); }, {"fractions must sum to 1"});
}

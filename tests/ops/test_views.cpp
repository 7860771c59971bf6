// View ops: shapes, strides, storage sharing and PyTorch's errors.
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {
Tensor grid() { return arange(12).reshape({3, 4}); }  // [[0..3],[4..7],[8..11]]
}  // namespace

TEST(Views, ViewAndReshape) {
  Tensor a = grid();
  Tensor v = a.view({4, -1});
  EXPECT_EQ(v.sizes().vec(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(v.storage().get(), a.storage().get());
  // A transposed tensor cannot be viewed flat: PyTorch's error and hint.
  expect_error([&] { (void)a.t().view({12}); },
               {"view", "[12]", "size [4, 3]", "stride [1, 4]", "Use .reshape(...) instead"});
  Tensor r = a.t().reshape({12});  // copies
  expect_values(r, {12}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  EXPECT_NE(r.storage().get(), a.storage().get());
  // A view that keeps dims together works on non-contiguous input.
  Tensor s = a.slice(1, 0, 4, 2);  // [3, 2] stride [4, 2]
  EXPECT_EQ(s.view({3, 2, 1}).strides().vec(), (std::vector<int64_t>{4, 2, 2}));  // torch: (4, 2, 2)
  expect_error([&] { (void)a.view({5, -1}); }, {"view", "invalid for input of size 12"});
  expect_error([&] { (void)a.view({-1, -1}); }, {"only one dimension can be inferred"});
}

TEST(Views, TransposePermuteNarrowSelectSlice) {
  Tensor a = grid();
  Tensor t = a.t();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{1, 4}));
  expect_values(t.contiguous(), {4, 3}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor p = arange(24).reshape({2, 3, 4}).permute({2, 0, 1});
  EXPECT_EQ(p.sizes().vec(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(p.strides().vec(), (std::vector<int64_t>{1, 12, 4}));
  expect_values(a.narrow(1, 1, 2), {3, 2}, {1, 2, 5, 6, 9, 10});
  expect_values(a.select(0, -1), {4}, {8, 9, 10, 11});
  expect_values(a.slice(1, 1, std::nullopt, 2), {3, 2}, {1, 3, 5, 7, 9, 11});
  expect_values(a.slice(0, -2), {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  expect_values(a.index({Slice(), 2}), {3}, {2, 6, 10});
  expect_values(a.index({Slice(std::nullopt, std::nullopt, 2), Slice(1, 3)}), {2, 2}, {1, 2, 9, 10});
  expect_values(a[1][2], {}, {6});
  expect_error([&] { (void)a.select(0, 3); }, {"select", "index 3 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { (void)a.transpose(0, 2); }, {"transpose", "dimension out of range", "[-2, 1]", "got 2"});
  expect_error([&] { (void)a.permute({0}); }, {"permute", "2 dims", "[0]"});
  expect_error([&] { (void)a.permute({0, 0}); }, {"permute", "repeated dim"});
  expect_error([&] { (void)a.narrow(1, 3, 2); }, {"narrow", "exceeds dimension size (4)"});
}

TEST(Views, ExpandSqueezeFlattenAsStrided) {
  Tensor c = tensor<float>({1, 2, 3}).reshape({3, 1});
  Tensor e = c.expand({2, 3, 4});
  EXPECT_EQ(e.strides().vec(), (std::vector<int64_t>{0, 1, 0}));
  expect_values(e.select(0, 1).select(1, 3), {3}, {1, 2, 3});
  expect_values(c.expand({-1, 2}), {3, 2}, {1, 1, 2, 2, 3, 3});
  expect_error([&] { (void)c.expand({2, 2}); },
               {"expand", "expanded size of the tensor (2) must match the existing size (3)"});
  Tensor s = zeros({1, 3, 1, 2});
  EXPECT_EQ(s.squeeze().sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(s.squeeze(2).sizes().vec(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(s.squeeze(1).sizes().vec(), (std::vector<int64_t>{1, 3, 1, 2}));
  EXPECT_EQ(s.unsqueeze(-1).sizes().vec(), (std::vector<int64_t>{1, 3, 1, 2, 1}));
  EXPECT_EQ(s.flatten(1).sizes().vec(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(s.flatten().sizes().vec(), (std::vector<int64_t>{6}));
  EXPECT_EQ(zeros({2, 12}).unflatten(1, {3, -1}).sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  Tensor base = arange(10).to(kFloat32);
  expect_values(base.as_strided({3, 2}, {3, 1}, 1), {3, 2}, {1, 2, 4, 5, 7, 8});
  expect_error([&] { (void)base.as_strided({4, 4}, {4, 1}); }, {"as_strided", "storage holds only 10"});
  expect_values(arange(9).reshape({3, 3}).diagonal(), {3}, {0, 4, 8});
  expect_values(arange(9).reshape({3, 3}).diagonal(1), {2}, {1, 5});
  expect_values(arange(5).unfold(0, 2, 2), {2, 2}, {0, 1, 2, 3});
}

TEST(Views, WritesThroughViewsAndCopyBroadcasts) {
  Tensor a = zeros({3, 4});
  a.t().select(0, 1).fill_(5);  // column 1
  expect_values(a, {3, 4}, {0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0});
  Tensor row = tensor<double>({1, 2, 3, 4});
  a.copy_(row);  // broadcast and convert float64 -> float32
  EXPECT_EQ(a.dtype(), kFloat32);
  expect_values(a, {3, 4}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
  expect_error([&] { a.copy_(zeros({2, 4})); }, {"copy_", "does not broadcast"});
}

TEST(Factories, ValuesAndDtypes) {
  EXPECT_EQ(arange(5).dtype(), kInt64);
  EXPECT_EQ(arange(0.0, 1.0, 0.25).dtype(), kFloat32);
  expect_values(arange(0.0, 1.0, 0.25), {4}, {0, 0.25, 0.5, 0.75});
  expect_values(arange(10, 0, -3), {4}, {10, 7, 4, 1});
  expect_values(linspace(0, 1, 5), {5}, {0, 0.25, 0.5, 0.75, 1});
  expect_values(eye(2, 3), {2, 3}, {1, 0, 0, 0, 1, 0});
  expect_values(full({2}, 7), {2}, {7, 7});
  EXPECT_EQ(full({2}, 7).dtype(), kInt64);
  EXPECT_EQ(full({2}, 7.0).dtype(), kFloat32);
  EXPECT_EQ(zeros_like(arange(3)).dtype(), kInt64);
  expect_values(ones_like(zeros({2, 2}, kFloat64)), {2, 2}, {1, 1, 1, 1});
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  Tensor b = from_blob(buf.data(), {2, 3});
  buf[4] = 50;  // no copy: the tensor sees the change
  expect_values(b, {2, 3}, {1, 2, 3, 4, 50, 6});
  bool freed = false;
  {
    Tensor owned = from_blob(buf.data(), {6}, {}, [&](void*) { freed = true; });
    Tensor view = owned.view({3, 2});
    owned = Tensor();
    EXPECT_FALSE(freed);
  }
  EXPECT_TRUE(freed);
  expect_error([] { (void)tensor<float>({1, 2, 3}, {2, 2}); }, {"3 values do not fill shape [2, 2]"});
  expect_error([] { (void)empty({-1}); }, {"empty", "non-negative"});
  Tensor bern = bernoulli(zeros({1000}), 0.3);
  double mean = 0;
  for (float v : bern.to_vector<float>()) mean += v;
  EXPECT_NEAR(mean / 1000, 0.3, 0.07);
}

TEST(Tensor, ItemAndDataPtr) {
  EXPECT_EQ(tensor<int32_t>({7}).item<int64_t>(), 7);
  EXPECT_DOUBLE_EQ(scalar_tensor(2.5).item<double>(), 2.5);
  expect_error([] { (void)arange(3).item(); }, {"item", "3 elements"});
  Tensor f = zeros({2});
  EXPECT_NE(f.data_ptr<float>(), nullptr);
  expect_error([&] { (void)f.data_ptr<double>(); }, {"data_ptr<float64>", "dtype float32"});
  EXPECT_EQ(f.numel(), 2);
  EXPECT_EQ(grid().dim(), 2);
  EXPECT_EQ(grid().size(-1), 4);
  EXPECT_EQ(grid().stride(0), 4);
}

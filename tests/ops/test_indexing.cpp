// Gathering, scattering, selecting and sorting: index_select, gather, scatter,
// scatter_add, masked_select, nonzero, index_fill_, sort, argsort, topk.
// Expected values are closed forms or come from PyTorch 1.13 (snippet named
// in a comment; x = torch.tensor(...) spelled out where it matters).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// torch.tensor([[3., 1., 2., 1.], [nan, -1., 5., 0.], [2., 2., -3., 7.]])
Tensor sort_input() {
  return tensor<float>({3, 1, 2, 1, NAN, -1, 5, 0, 2, 2, -3, 7}, {3, 4});
}
}  // namespace

// ---- index_select ----

TEST(IndexingIndexSelect, RowsColumnsAndNegativeDim) {
  Tensor a = arange(12).view({3, 4});
  Tensor rows = index_select(a, 0, tensor<int64_t>({2, 0, 2}));
  expect_values(rows, {3, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  EXPECT_EQ(rows.dtype(), kInt64);
  Tensor cols = a.index_select(-1, tensor<int64_t>({3, 1}));
  expect_values(cols, {3, 2}, {3, 1, 7, 5, 11, 9});
  // An empty index gives an empty dim.
  expect_values(index_select(a, 1, tensor<int64_t>(std::vector<int64_t>{})), {3, 0}, {});
}

TEST(IndexingIndexSelect, Int32IndexAndDtypes) {
  Tensor idx = tensor<int32_t>({1, 1, 0});
  expect_values(index_select(tensor<double>({0.5, -1.5}), 0, idx), {3}, {-1.5, -1.5, 0.5});
  Tensor b = index_select(tensor<bool>({true, false}), 0, idx);
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, false, true}));
  Tensor h = index_select(tensor<float>({1, 2}).to(kFloat16), 0, idx);
  EXPECT_EQ(h.dtype(), kFloat16);
  expect_values(h, {3}, {2, 2, 1});
}

TEST(IndexingIndexSelect, NonContiguousInputs) {
  // a.t() is [4, 3]; select rows 3 and 0 of it = columns of a.
  Tensor a = arange(12.0).view({3, 4});
  expect_values(index_select(a.t(), 0, tensor<int64_t>({3, 0})), {2, 3}, {3, 7, 11, 0, 4, 8});
  // Strided index (every other element).
  Tensor idx = tensor<int64_t>({2, 9, 0, 9, 1}).slice(0, 0, std::nullopt, 2);
  expect_values(index_select(a, 0, idx), {3, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(IndexingIndexSelect, ZeroDimSelf) {
  // torch.index_select(torch.tensor(3.), 0, torch.tensor([0])) -> tensor(3.)
  expect_values(index_select(scalar_tensor(3.0), 0, tensor<int64_t>({0})), {}, {3});
}

TEST(IndexingIndexSelect, Errors) {
  Tensor a = ones({3, 2});
  expect_error([&] { index_select(a, 0, tensor<int64_t>({5})); },
               {"index_select: index 5 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { index_select(a, 0, tensor<int64_t>({-1})); }, {"index -1 is out of bounds"});
  expect_error([&] { index_select(a, 0, tensor<float>({1})); },
               {"index_select(): Expected dtype int32 or int64 for index", "float32"});
  expect_error([&] { index_select(a, 0, tensor<int64_t>({1}, {1, 1})); }, {"Index is supposed to be a vector"});
  expect_error([&] { index_select(a, 2, tensor<int64_t>({1})); }, {"index_select", "dimension out of range"});
  EXPECT_THROW(index_select(a, 0, tensor<int64_t>({3})), IndexError);
}

// ---- gather ----

TEST(IndexingGather, ThreeDimAlongEachDim) {
  Tensor a = arange(24.0).view({2, 3, 4});
  // torch.gather(torch.arange(24.).view(2,3,4), 1, idx)
  Tensor idx = tensor<int64_t>({0, 2, 1, 1, 2, 0, 1, 0, 0, 0, 2, 2}, {2, 3, 2});
  expect_values(gather(a, 1, idx), {2, 3, 2}, {0, 9, 4, 5, 8, 1, 16, 13, 12, 13, 20, 21});
  // Index smaller than self in other dims, negative dim: gather(a, 2, [[[3],[0]],[[1],[2]]])
  Tensor idx2 = tensor<int64_t>({3, 0, 1, 2}, {2, 2, 1});
  expect_values(a.gather(-1, idx2), {2, 2, 1}, {3, 4, 13, 18});
}

TEST(IndexingGather, TransposedSelfAndIndex) {
  Tensor a = arange(24.0).view({2, 3, 4});
  // torch.gather(a.transpose(1,2), 2, [[[0,2],[1,1]],[[2,0],[0,0]]])
  Tensor idx = tensor<int64_t>({0, 2, 1, 1, 2, 0, 0, 0}, {2, 2, 2});
  expect_values(gather(a.transpose(1, 2), 2, idx), {2, 2, 2}, {0, 8, 5, 5, 20, 12, 13, 13});
  // A transposed index.
  Tensor m = arange(6).view({2, 3});
  Tensor it = tensor<int64_t>({2, 0, 1, 1}, {2, 2}).t();  // [[2, 1], [0, 1]]
  expect_values(gather(m, 1, it), {2, 2}, {2, 1, 3, 4});
}

TEST(IndexingGather, DtypesAndZeroDim) {
  Tensor idx = tensor<int64_t>({1, 0, 1}, {1, 3});
  Tensor b = gather(tensor<bool>({true, false}, {1, 2}), 1, idx);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, false}));
  expect_values(gather(tensor<int64_t>({7, 8}, {1, 2}), 1, idx), {1, 3}, {8, 7, 8});
  expect_values(gather(tensor<double>({0.25, 0.5}, {1, 2}), 1, idx), {1, 3}, {0.5, 0.25, 0.5});
  expect_values(gather(scalar_tensor(4.0), 0, scalar_tensor(int64_t{0})), {}, {4});
}

TEST(IndexingGather, Errors) {
  Tensor a = ones({3, 4});
  expect_error([&] { gather(a, 1, tensor<int64_t>({5}, {1, 1})); },
               {"gather: index 5 is out of bounds for dimension 1 with size 4"});
  expect_error([&] { gather(a, 1, tensor<int64_t>({-1}, {1, 1})); }, {"index -1 is out of bounds"});
  expect_error([&] { gather(a, 1, tensor<int32_t>({1}, {1, 1})); },
               {"gather(): Expected dtype int64 for index", "int32"});
  expect_error([&] { gather(a, 1, tensor<int64_t>({1})); },
               {"Index tensor must have the same number of dimensions as input tensor"});
  expect_error([&] { gather(a, 1, zeros({4, 1}, kInt64)); },
               {"Size does not match at dimension 0 expected index [4, 1] to be smaller than self [3, 4] "
                "apart from dimension 1"});
  // Larger along dim itself is fine: torch.gather(ones(3,4), 1, zeros(2,6)) -> [2, 6]
  expect_values(gather(a, 1, zeros({2, 6}, kInt64)), {2, 6}, std::vector<double>(12, 1.0));
}

// ---- scatter / scatter_add ----

TEST(IndexingScatter, TensorSrcAndScatterAdd) {
  Tensor z = zeros({3, 5});
  Tensor src = arange(1.0, 11.0).view({2, 5});
  Tensor idx = tensor<int64_t>({0, 1, 2, 0, 0, 2, 0, 0, 1, 2}, {2, 5});
  // z.scatter(0, idx, src) (also scatter_add: no duplicates per column here)
  std::vector<double> want{1, 7, 8, 4, 5, 0, 2, 0, 9, 0, 6, 0, 3, 0, 10};
  expect_values(scatter(z, 0, idx, src), {3, 5}, want);
  expect_values(scatter_add(z, 0, idx, src), {3, 5}, want);
  expect_values(z, {3, 5}, std::vector<double>(15, 0.0));  // out-of-place left z alone
}

TEST(IndexingScatter, ScatterAddAccumulatesDuplicates) {
  // torch.zeros(2,3).scatter_add(1, [[0,0,2,0],[1,1,1,1]], torch.ones(2,4))
  Tensor idx = tensor<int64_t>({0, 0, 2, 0, 1, 1, 1, 1}, {2, 4});
  expect_values(scatter_add(zeros({2, 3}), 1, idx, ones({2, 4})), {2, 3}, {3, 0, 1, 0, 4, 0});
  Tensor acc = zeros({2, 3}, kInt64);
  acc.scatter_add_(-1, idx, ones({2, 4}, kInt64));
  expect_values(acc, {2, 3}, {3, 0, 1, 0, 4, 0});
  Tensor d = zeros({4}, kFloat64);
  d.scatter_add_(0, tensor<int64_t>({3, 3, 0}), tensor<double>({0.5, 0.25, 1}));
  expect_values(d, {4}, {1, 0, 0, 0.75});
}

TEST(IndexingScatter, ScalarValueAndInPlace) {
  // torch.zeros(2,4).scatter(1, [[1,3],[0,0]], 2.5)
  Tensor idx = tensor<int64_t>({1, 3, 0, 0}, {2, 2});
  expect_values(scatter(zeros({2, 4}), 1, idx, 2.5), {2, 4}, {0, 2.5, 0, 2.5, 2.5, 0, 0, 0});
  // An int tensor takes the value truncated: torch.zeros(3,4,dtype=long).scatter(1,[[1]],2.5)
  expect_values(scatter(zeros({3, 4}, kInt64), 1, tensor<int64_t>({1}, {1, 1}), 2.5), {3, 4},
                {0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  Tensor t = zeros({2, 2}, kBool);
  uint32_t v0 = t.version();
  t.scatter_(0, tensor<int64_t>({1, 0}, {1, 2}), ones({1, 2}, kBool));
  EXPECT_EQ(t.to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_GT(t.version(), v0);
}

TEST(IndexingScatter, IntoTransposedSelf) {
  // Writes go through self's strides: scatter into a.t() changes a.
  Tensor a = zeros({3, 2});
  Tensor at = a.t();  // [2, 3]
  at.scatter_(1, tensor<int64_t>({2, 0}, {2, 1}), tensor<float>({5, 6}, {2, 1}));
  expect_values(a, {3, 2}, {0, 6, 0, 0, 5, 0});
}

TEST(IndexingScatter, Errors) {
  Tensor z = zeros({3, 4});
  expect_error([&] { z.scatter_(1, tensor<int64_t>({4}, {1, 1}), ones({2, 3})); },
               {"scatter: index 4 is out of bounds for dimension 1 with size 4"});
  expect_error([&] { scatter_add(z, 1, tensor<int64_t>({4}, {1, 1}), ones({2, 3})); },
               {"scatter_add: index 4 is out of bounds for dimension 1 with size 4"});
  expect_error([&] { scatter(z, 1, zeros({2, 3}, kInt64), ones({2, 2})); },
               {"Expected index [2, 3] to be smaller than self [3, 4] apart from dimension 1 and to be "
                "smaller size than src [2, 2]"});
  expect_error([&] { scatter(z, 1, zeros({2, 3}, kInt64), ones({2, 3}, kFloat64)); },
               {"scatter(): Expected self.dtype to be equal to src.dtype"});
  expect_error([&] { scatter(z, 1, zeros({2, 3}, kInt32), ones({2, 3})); },
               {"scatter(): Expected dtype int64 for index"});
  expect_error([&] { scatter(z, 1, tensor<int64_t>({1}), 2.5); },
               {"Index tensor must have the same number of dimensions as self tensor"});
  expect_error([&] { scatter(z, 2, zeros({1, 1}, kInt64), 1.0); }, {"dimension out of range"});
  // A failed in-place scatter_ leaves self untouched.
  expect_values(z, {3, 4}, std::vector<double>(12, 0.0));
}

// ---- masked_select / nonzero / index_fill_ ----

TEST(IndexingMaskedSelect, BroadcastMask) {
  // torch.arange(6.).view(2,3).masked_select(torch.tensor([True, False, True]))
  Tensor a = arange(6.0).view({2, 3});
  Tensor m = tensor<bool>({true, false, true});
  expect_values(a.masked_select(m), {4}, {0, 2, 3, 5});
  // Transposed input keeps row-major order of the (transposed) view.
  expect_values(masked_select(a.t(), tensor<bool>({true, false}, {1, 2})), {3}, {0, 1, 2});
  Tensor i = masked_select(tensor<int64_t>({4, 5, 6}), tensor<bool>({false, false, false}));
  EXPECT_EQ(i.dtype(), kInt64);
  expect_values(i, {0}, {});
  expect_error([&] { masked_select(a, tensor<int64_t>({1, 0, 1})); }, {"masked_select: expected BoolTensor"});
  expect_error([&] { masked_select(ones({3}), tensor<bool>({true, false})); }, {"masked_select"});
}

TEST(IndexingNonzero, CoordinatesRowMajor) {
  // torch.nonzero(torch.tensor([[0, 1, 0], [2, 0, 3]]))
  expect_values(nonzero(tensor<int64_t>({0, 1, 0, 2, 0, 3}, {2, 3})), {3, 2}, {0, 1, 1, 0, 1, 2});
  // torch.nonzero of a 3-D bool tensor
  Tensor b = tensor<bool>({true, false, false, true, false, false, true, true}, {2, 2, 2});
  expect_values(nonzero(b), {4, 3}, {0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1});
  // NaN is non-zero; transposed input follows the view's order.
  Tensor f = tensor<float>({0, NAN, 0.5f, 0}, {2, 2}).t();  // [[0, .5], [nan, 0]]
  expect_values(nonzero(f), {2, 2}, {0, 1, 1, 0});
  // 0-dim: torch.nonzero(torch.tensor(3.)) is [1, 0]; of 0. it is [0, 0].
  EXPECT_EQ(nonzero(scalar_tensor(3.0)).sizes().vec(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(nonzero(scalar_tensor(0.0)).sizes().vec(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(nonzero(ones({5})).dtype(), kInt64);
}

TEST(IndexingNonzero, LargeInputSplitsAcrossThreads) {
  // Every third element of 200k is non-zero: positions 0, 3, 6, ...
  Tensor x = remainder(arange(200000), 3) == 0;
  Tensor nz = nonzero(x);
  ASSERT_EQ(nz.size(0), 66667);
  std::vector<int64_t> v = nz.to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int64_t>(3 * i));
  expect_values(masked_select(arange(200000.0), x).narrow(0, 66660, 7), {7},
                {199980, 199983, 199986, 199989, 199992, 199995, 199998});
}

TEST(IndexingIndexFill, FillsSlicesWithNegativeIndex) {
  // torch.zeros(3,4).index_fill_(1, torch.tensor([-1]), 1.)
  Tensor z = zeros({3, 4});
  z.index_fill_(1, tensor<int64_t>({-1, 0}), 1.0);
  expect_values(z, {3, 4}, {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1});
  Tensor zt = zeros({2, 3}, kInt64).t();  // [3, 2] view
  zt.index_fill_(0, tensor<int64_t>({1}), 7);
  expect_values(zt, {3, 2}, {0, 0, 7, 7, 0, 0});
  expect_error([&] { zeros({3, 4}).index_fill_(0, tensor<int64_t>({5}), 1.0); },
               {"index_fill_: index 5 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { zeros({3, 4}).index_fill_(0, tensor<int32_t>({1}), 1.0); },
               {"index_fill_(): Expected dtype int64 for index"});
}

// ---- sort / argsort / topk ----

TEST(IndexingSort, NanIsLargest) {
  // torch.sort(x, dim=1)
  auto [v, i] = sort(sort_input(), 1);
  expect_values(v, {3, 4}, {1, 1, 2, 3, -1, 0, 5, kNaN, -3, 2, 2, 7});
  expect_values(i, {3, 4}, {1, 3, 2, 0, 1, 3, 2, 0, 2, 0, 1, 3});
  EXPECT_EQ(i.dtype(), kInt64);
  // torch.sort(x, dim=0, descending=True)
  auto [vd, id] = sort(sort_input(), 0, true);
  expect_values(vd, {3, 4}, {kNaN, 2, 5, 7, 3, 1, 2, 1, 2, -1, -3, 0});
  expect_values(id, {3, 4}, {1, 2, 1, 2, 0, 0, 0, 0, 2, 1, 2, 1});
}

TEST(IndexingSort, TransposedStableAndArgsort) {
  // torch.sort(x.t(), dim=-1, stable=True)
  auto [v, i] = sort(sort_input().t(), -1, false, true);
  expect_values(v, {4, 3}, {2, 3, kNaN, -1, 1, 2, -3, 2, 5, 0, 1, 7});
  expect_values(i, {4, 3}, {2, 0, 1, 1, 0, 2, 2, 0, 1, 1, 0, 2});
  // torch.argsort(x, dim=1, descending=True)
  expect_values(argsort(sort_input(), 1, true), {3, 4}, {0, 2, 1, 3, 0, 2, 3, 1, 3, 0, 1, 2});
}

TEST(IndexingSort, IntegerBoolDoubleAndZeroDim) {
  // torch.sort(torch.tensor([[5,-2,9],[0,3,3]]), dim=1, descending=True, stable=True)
  auto [v, i] = sort(tensor<int64_t>({5, -2, 9, 0, 3, 3}, {2, 3}), 1, true, true);
  EXPECT_EQ(v.dtype(), kInt64);
  expect_values(v, {2, 3}, {9, 5, -2, 3, 3, 0});
  expect_values(i, {2, 3}, {2, 0, 1, 1, 2, 0});
  // torch.sort(torch.tensor([True, False, True]))
  auto [bv, bi] = sort(tensor<bool>({true, false, true}));
  EXPECT_EQ(bv.to_vector<bool>(), (std::vector<bool>{false, true, true}));
  expect_values(bi, {3}, {1, 0, 2});
  auto [dv, di] = sort(tensor<double>({0.5, -0.25, 1e300}), 0, true);
  expect_values(dv, {3}, {1e300, 0.5, -0.25});
  expect_values(di, {3}, {2, 0, 1});
  auto [sv, si] = sort(scalar_tensor(3.0));
  expect_values(sv, {}, {3});
  expect_values(si, {}, {0});
  expect_error([&] { sort(ones({2}), 1); }, {"sort", "dimension out of range"});
}

TEST(IndexingTopk, LargestSmallestAndNan) {
  // Rows 0 and 1 of torch.topk(x, 2, dim=1) (row 2 has a tie; see below).
  auto [v, i] = topk(sort_input(), 2, 1);
  expect_values(v, {3, 2}, {3, 2, kNaN, 5, 7, 2});
  expect_values(i.narrow(0, 0, 2), {2, 2}, {0, 2, 0, 2});
  // torch.topk(x, 2, dim=1, largest=False), rows 0 and 1.
  auto [vs, is] = topk(sort_input(), 2, 1, false);
  expect_values(vs, {3, 2}, {1, 1, -1, 0, -3, 2});
  expect_values(is.narrow(0, 0, 2), {2, 2}, {1, 3, 1, 3});
  // torch.topk(x, 2, dim=0)
  auto [v0, i0] = topk(sort_input(), 2, 0);
  expect_values(v0, {2, 4}, {kNaN, 2, 5, 7, 3, 1, 2, 1});
  expect_values(i0, {2, 4}, {1, 2, 1, 2, 0, 0, 0, 0});
}

TEST(IndexingTopk, TiesPreferLowerIndex) {
  // Ember's documented rule (PyTorch leaves tie order unspecified).
  auto [v, i] = topk(tensor<float>({2, 2, -3, 7}), 2);
  expect_values(v, {2}, {7, 2});
  expect_values(i, {2}, {3, 0});
  auto [vi, ii] = topk(tensor<int64_t>({5, -2, 9, 0, 3, 3}, {2, 3}), 1, 0);
  expect_values(vi, {1, 3}, {5, 3, 9});  // torch.topk(xi, 1, dim=0)
  expect_values(ii, {1, 3}, {0, 1, 0});
}

TEST(IndexingTopk, EdgeCasesAndErrors) {
  auto [v, i] = topk(arange(5.0), 0);
  expect_values(v, {0}, {});
  auto [sv, si] = topk(scalar_tensor(3.0), 1);
  expect_values(sv, {}, {3});
  expect_values(si, {}, {0});
  auto [tv, ti] = topk(arange(6.0).view({2, 3}).t(), 1, 1);  // [[0,3],[1,4],[2,5]]
  expect_values(tv, {3, 1}, {3, 4, 5});
  expect_values(ti, {3, 1}, {1, 1, 1});
  expect_error([&] { topk(ones({3}), 4); }, {"topk: selected index k out of range"});
  expect_error([&] { topk(ones({3}), -1); }, {"selected index k out of range"});
  expect_error([&] { topk(ones({3}), 1, 1); }, {"topk", "dimension out of range"});
}

// ---- fast kernels against plain loops (random inputs, many threads) ----

namespace {
// Row-major coordinates <-> offset for a contiguous shape.
std::vector<int64_t> unravel(int64_t p, IntArrayRef shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = p % shape[d];
    p /= shape[d];
  }
  return c;
}
int64_t ravel(const std::vector<int64_t>& c, IntArrayRef shape) {
  int64_t p = 0;
  for (size_t d = 0; d < shape.size(); ++d) p = p * shape[d] + c[d];
  return p;
}
}  // namespace

TEST(IndexingReference, GatherScatterAddIndexSelectMatchLoops) {
  Generator gen(7);
  const std::vector<int64_t> shape{6, 50, 40};
  Tensor x = randn(shape, kFloat64, &gen).transpose(0, 2).contiguous().transpose(0, 2);  // strided
  std::vector<double> xv = x.to_vector<double>();
  for (int64_t dim = 0; dim < 3; ++dim) {
    std::vector<int64_t> ishape = shape;
    ishape[dim] = 70;  // longer than self along dim: repeats
    ishape[(dim + 1) % 3] -= 1;  // smaller in another dim
    Tensor idx = randint(0, shape[dim], ishape, kInt64, &gen);
    std::vector<int64_t> iv = idx.to_vector<int64_t>();
    // gather: out[c] = x[c with c[dim] = idx[c]]
    std::vector<double> g = gather(x, dim, idx).to_vector<double>();
    std::vector<double> want_g(iv.size());
    // scatter_add: acc[c with c[dim] = idx[c]] += src[c]
    Tensor src = randn(ishape, kFloat64, &gen);
    std::vector<double> sv = src.to_vector<double>();
    std::vector<double> want_s(xv.size(), 0.0);
    for (size_t p = 0; p < iv.size(); ++p) {
      auto c = unravel(static_cast<int64_t>(p), ishape);
      c[dim] = iv[p];
      want_g[p] = xv[ravel(c, shape)];
      want_s[ravel(c, shape)] += sv[p];
    }
    EXPECT_EQ(g, want_g) << "gather dim " << dim;
    expect_values(scatter_add(zeros(shape, kFloat64), dim, idx, src), shape, want_s, 1e-12, 1e-12);
    // index_select with a 1-D index: out[c] = x[c with c[dim] = sel[c[dim]]]
    Tensor sel = randint(0, shape[dim], {33}, kInt64, &gen);
    std::vector<int64_t> selv = sel.to_vector<int64_t>();
    std::vector<int64_t> oshape = shape;
    oshape[dim] = 33;
    std::vector<double> want_i(static_cast<size_t>(compute_numel(oshape)));
    for (size_t p = 0; p < want_i.size(); ++p) {
      auto c = unravel(static_cast<int64_t>(p), oshape);
      c[dim] = selv[c[dim]];
      want_i[p] = xv[ravel(c, shape)];
    }
    EXPECT_EQ(index_select(x, dim, sel).to_vector<double>(), want_i) << "index_select dim " << dim;
  }
}

TEST(IndexingReference, SortAndTopkAgreeWithStdSort) {
  Generator gen(11);
  Tensor x = randn({300, 257}, kFloat32, &gen);
  std::vector<float> xv = x.to_vector<float>();
  auto [v, i] = sort(x, 1, true);
  auto [tv, ti] = topk(x, 5, 1);
  std::vector<float> vv = v.to_vector<float>(), tvv = tv.to_vector<float>();
  std::vector<int64_t> iv = i.to_vector<int64_t>();
  for (int64_t r = 0; r < 300; ++r) {
    std::vector<float> row(xv.begin() + r * 257, xv.begin() + (r + 1) * 257);
    std::sort(row.begin(), row.end(), std::greater<float>());
    for (int64_t c = 0; c < 257; ++c) {
      ASSERT_EQ(vv[r * 257 + c], row[c]);
      ASSERT_EQ(xv[r * 257 + iv[r * 257 + c]], row[c]);  // indices point at the values
    }
    for (int64_t c = 0; c < 5; ++c) ASSERT_EQ(tvv[r * 5 + c], row[c]);
  }
  EXPECT_TRUE(equal(ti, i.narrow(1, 0, 5)));  // values are distinct, so indices agree
}

TEST(IndexingReference, CatOfSplitsRoundTrips) {
  Generator gen(3);
  Tensor x = randn({40, 30, 20}, kFloat32, &gen).permute({2, 0, 1});  // [20, 40, 30], strided
  for (int64_t dim = -3; dim < 3; ++dim) {
    Tensor back = cat(split(x, 7, dim), dim);
    EXPECT_TRUE(equal(back, x)) << "dim " << dim;
    EXPECT_TRUE(equal(stack(unbind(x, dim), dim), x)) << "dim " << dim;
  }
}

// libtorch's x.index({...}) / x.index_put_({...}, v) with index tensors
// mixed into basic entries. Expected values: torch 1.13 on
// x = torch.arange(24.).view(2, 3, 4) with the Python spelling in each comment.
TEST(IndexingTensorIndex, MixesBasicAndAdvancedEntriesLikePyTorch) {
  Tensor x = arange(24).to(kFloat32).view({2, 3, 4});
  Tensor i03 = tensor<int64_t>({0, 3});
  // x[1, :, [0, 3]]: the integer selects first; the index dims stay in place.
  expect_values(x.index({1, Slice(), i03}), {3, 2}, {12, 15, 16, 19, 20, 23});
  // x[:, [2, 0], 1:3]
  expect_values(x.index({Slice(), tensor<int64_t>({2, 0}), Slice(1, 3)}), {2, 2, 2}, {9, 10, 1, 2, 21, 22, 13, 14});
  // x[[1, 0], :, [3, 1]]: separated index dims go first.
  expect_values(x.index({tensor<int64_t>({1, 0}), Slice(), tensor<int64_t>({3, 1})}), {2, 3},
                {15, 19, 23, 1, 5, 9});
  // x[..., [0, -1]]
  expect_values(x.index({TensorIndex::ellipsis(), tensor<int64_t>({0, -1})}), {2, 3, 2},
                {0, 3, 4, 7, 8, 11, 12, 15, 16, 19, 20, 23});
  // x[:, x[0] > 6]: a mask over two dims.
  expect_values(x.index({Slice(), gt(x[0], 6)}), {2, 5}, {7, 8, 9, 10, 11, 19, 20, 21, 22, 23});
  // x[None, 0, [1, 2]]
  expect_values(x.index({TensorIndex::none(), 0, tensor<int64_t>({1, 2})}), {1, 2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  // An entry list without tensors is still a view.
  EXPECT_EQ(x.index({1, Slice(1, std::nullopt)}).storage_offset(), 16);
}

TEST(IndexingTensorIndex, IndexPutWritesThroughTheBasicView) {
  Tensor x = arange(24).to(kFloat32).view({2, 3, 4});
  // y[1:, [0, 2]] = 7 -> sum 192, y[1] = [7]*4, [16..19], [7]*4
  Tensor y = x.clone();
  y.index_put_({Slice(1, std::nullopt), tensor<int64_t>({0, 2})}, 7);
  EXPECT_EQ(y.sum().item<float>(), 192.0f);
  expect_values(y[1], {3, 4}, {7, 7, 7, 7, 16, 17, 18, 19, 7, 7, 7, 7});
  // y[..., x[0, 0] > 1] = tensor([-1., -2.]) -> y[:, 0] = [0, 1, -1, -2, 12, 13, -1, -2], sum 108
  y = x.clone();
  y.index_put_({TensorIndex::ellipsis(), gt(x.index({0, 0}), 1)}, tensor<float>({-1, -2}));
  expect_values(y.index({Slice(), 0}), {2, 4}, {0, 1, -1, -2, 12, 13, -1, -2});
  EXPECT_EQ(y.sum().item<float>(), 108.0f);
  // y[0, 1:3] = tensor([9., 8., 7., 6.]): basic entries copy, broadcasting.
  y = x.clone();
  y.index_put_({0, Slice(1, 3)}, tensor<float>({9, 8, 7, 6}));
  expect_values(y[0], {3, 4}, {0, 1, 2, 3, 9, 8, 7, 6, 9, 8, 7, 6});
  // An int64 tensor: y[:, 1:3] = tensor([1.7, 2.2]) casts (copy); y[:, [1, 3]] = 5.5 casts the
  // Scalar; a float tensor through index tensors is refused, as in PyTorch.
  Tensor n = zeros({3, 4}, kInt64);
  n.index_put_({Slice(), Slice(1, 3)}, tensor<float>({1.7f, 2.2f}));
  expect_values(n[0], {4}, {0, 1, 2, 0});
  n = zeros({3, 4}, kInt64);
  n.index_put_({Slice(), tensor<int64_t>({1, 3})}, 5.5);
  expect_values(n[2], {4}, {0, 5, 0, 5});
  expect_error([&] { n.index_put_({Slice(), tensor<int64_t>({1, 3})}, tensor<float>({1.7f, 2.2f})); },
               {"index_put", "dtypes match", "int64", "float32"});
  // Two-argument calls with index tensors only take this overload too.
  Tensor z = zeros({3});
  z.index_put_({tensor<int64_t>({0, 2})}, ones({2}));
  expect_values(z, {3}, {1, 0, 1});
}

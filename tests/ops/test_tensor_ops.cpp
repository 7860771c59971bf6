// The issue-20 tensor ops beyond what op_db checks: negative dims through the
// central wrap_dim on a sample of ops (and the one IndexError for out of
// range), error messages naming op and values, in-place forms, empty and
// zero-size inputs, integer paths. Values are closed forms.
#include <cmath>
#include <limits>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

Tensor grid() { return arange(24.0).view({2, 3, 4}); }

// Every op taking a dim gives the same result for d and d - ndim.
TEST(NegativeDims, SameResultAsPositive) {
  Tensor x = grid();
  auto same = [](const Tensor& a, const Tensor& b, const char* what) {
    ASSERT_EQ(a.sizes().vec(), b.sizes().vec()) << what;
    EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << what;
  };
  same(sum(x, {-1}), sum(x, {2}), "sum");
  same(mean(x, {-3, -1}, true), mean(x, {0, 2}, true), "mean");
  same(amax(x, {-2}), amax(x, {1}), "amax");
  same(max(x, -2).second, max(x, 1).second, "max");
  same(argmin(x, -1), argmin(x, 2), "argmin");
  same(var(x, {-1}), var(x, {2}), "var");
  same(cumsum(x, -2), cumsum(x, 1), "cumsum");
  same(cumprod(x, -1), cumprod(x, 2), "cumprod");
  same(cummax(x, -3).first, cummax(x, 0).first, "cummax");
  same(logcumsumexp(x, -1), logcumsumexp(x, 2), "logcumsumexp");
  same(median(x, -1).first, median(x, 2).first, "median");
  same(kthvalue(x, 2, -2).first, kthvalue(x, 2, 1).first, "kthvalue");
  same(quantile(x, 0.5, -1), quantile(x, 0.5, 2), "quantile");
  same(softmax(x, -1), softmax(x, 2), "softmax");
  same(sort(x, -2).first, sort(x, 1).first, "sort");
  same(topk(x, 2, -3).first, topk(x, 2, 0).first, "topk");
  same(flip(x, {-1}), flip(x, {2}), "flip");
  same(roll(x, {1}, {-1}), roll(x, {1}, {2}), "roll");
  same(movedim(x, -1, 0), movedim(x, 2, 0), "movedim");
  same(repeat_interleave(x, 2, -1), repeat_interleave(x, 2, 2), "repeat_interleave");
  same(index_select(x, -1, tensor<int64_t>({0, 3})), index_select(x, 2, tensor<int64_t>({0, 3})), "index_select");
  same(diff(x, 1, -2), diff(x, 1, 1), "diff");
  same(diag_embed(x, 0, -1, -2), diag_embed(x, 0, 3, 2), "diag_embed");
  same(stack({x, x}, -1), stack({x, x}, 3), "stack");
  same(cat({x, x}, -3), cat({x, x}, 0), "cat");
  same(unsqueeze(x, -1), unsqueeze(x, 3), "unsqueeze");
  same(tensor_split(x, 2, -1)[1], tensor_split(x, 2, 2)[1], "tensor_split");
  same(take_along_dim(x, zeros({2, 3, 1}, kInt64), -1), take_along_dim(x, zeros({2, 3, 1}, kInt64), 2),
       "take_along_dim");
  same(scatter_reduce(x, -1, zeros({2, 3, 4}, kInt64), x, "amax"),
       scatter_reduce(x, 2, zeros({2, 3, 4}, kInt64), x, "amax"), "scatter_reduce");
  same(index_fill(x, -2, tensor<int64_t>({-1}), 0.0), index_fill(x, 1, tensor<int64_t>({2}), 0.0), "index_fill");
}

TEST(NegativeDims, OutOfRangeIsOneIndexError) {
  Tensor x = grid();
  for (auto f : std::vector<std::function<void()>>{
           [&] { sum(x, {-4}); }, [&] { cumprod(x, 3); }, [&] { median(x, -4); }, [&] { movedim(x, 0, 3); },
           [&] { roll(x, {1}, {-4}); }, [&] { cummin(x, -4); }, [&] { kthvalue(x, 1, 3); },
           [&] { tensor_split(x, 2, 5); }, [&] { logcumsumexp(x, -5); }, [&] { diff(x, 1, 3); }}) {
    expect_error(f, {"dimension out of range (expected to be in range of [-3, 2]"});
  }
}

// ---- errors name the op and the values ----

TEST(TensorOpErrors, NameOpAndValues) {
  Tensor x = grid().to(kFloat64);
  expect_error([&] { kthvalue(x, 5, -1); }, {"kthvalue", "k = 5", "size 4"});
  expect_error([&] { quantile(x, 1.5, 0); }, {"quantile", "[0, 1]", "1.5"});
  expect_error([&] { quantile(x, 0.5, 0, false, "cubic"); }, {"quantile", "cubic"});
  expect_error([&] { scatter_reduce(x, 0, zeros({1, 1, 1}, kInt64), x, "max"); }, {"scatter_reduce", "max"});
  expect_error([&] { take(x, tensor<int64_t>({24})); }, {"take", "index 24", "24 elements"});
  expect_error([&] { index_add(x, 0, tensor<int64_t>({2}), ones({1, 3, 4}, kFloat64)); },
               {"index_add", "index 2", "size 2"});
  expect_error([&] { index_copy(x, 0, tensor<int64_t>({0}), ones({1, 3, 4}, kFloat32)); },
               {"index_copy", "float64", "float32"});
  expect_error([&] { hsplit(arange(5.0), 2); }, {"hsplit", "5", "2"});
  expect_error([&] { rot90(x, 1, {0, 0}); }, {"rot90", "dim0 = 0", "dim1 = 0"});
  expect_error([&] { mv(ones({2, 3}), ones({4})); }, {"mv", "2x3", "4"});
  // A negative power inverts first, with linalg.inv's errors (PyTorch 1.13's words).
  expect_error([&] { matrix_power(ones({2, 2}), -1); }, {"linalg.inv", "The diagonal element 2 is zero", "singular"});
  expect_error([&] { einsum("ij,jk->ik", {ones({2, 3})}); }, {"einsum", "2 operands", "1 were given"});
  expect_error([&] { einsum("ij->iz", {ones({2, 3})}); }, {"einsum", "output subscript z"});
  expect_error([&] { einsum("ij,jk", {ones({2, 3}), ones({4, 2})}); }, {"einsum", "subscript j", "size 3", "4"});
  expect_error([&] { cross(ones({2, 2}), ones({2, 2}), 1); }, {"cross", "length 3"});
  expect_error([&] { bincount(tensor<int64_t>({1, -1})); }, {"bincount", "-1"});
  expect_error([&] { tensordot(ones({2, 3}), ones({4, 2}), 1); }, {"tensordot", "size 3", "size 4"});
  expect_error([&] { slice_scatter(ones({3, 4}), ones({2, 4}), 0, 0, 1); }, {"slice_scatter", "[2, 4]", "[1, 4]"});
  expect_error([&] { masked_scatter(ones({2}), tensor<bool>({true, true}), ones({1})); },
               {"masked_scatter", "at least 2", "got 1"});
  expect_error([&] { movedim(x, {0, 1}, {2}); }, {"movedim", "[0, 1]", "[2]"});
}

// ---- in-place forms ----

TEST(TensorOpInPlace, IndexAndScatterForms) {
  Tensor x = zeros({3, 2}, kFloat64);
  uint32_t v0 = x.version();
  x.index_add_(0, tensor<int64_t>({2, 0, 2}), ones({3, 2}, kFloat64), 2.0);
  expect_values(x, {3, 2}, {2, 2, 0, 0, 4, 4});
  EXPECT_GT(x.version(), v0);
  x.index_copy_(1, tensor<int64_t>({1}), full({3, 1}, 7.0, kFloat64));
  expect_values(x, {3, 2}, {2, 7, 0, 7, 4, 7});
  x.index_put_({tensor<int64_t>({0, 0}), tensor<int64_t>({0, 0})}, full({2}, 1.0, kFloat64), true);
  expect_values(x, {3, 2}, {4, 7, 0, 7, 4, 7});
  x.masked_scatter_(tensor<bool>({true, false}), tensor<double>({-1, -2, -3}));
  expect_values(x, {3, 2}, {-1, 7, -2, 7, -3, 7});
  x.scatter_reduce_(0, zeros({1, 2}, kInt64), full({1, 2}, 5.0, kFloat64), "amax", false);
  expect_values(x, {3, 2}, {5, 5, -2, 7, -3, 7});
}

TEST(TensorOpInPlace, ScanAndProductForms) {
  Tensor x = tensor<double>({1, 2, 3, 4}, {2, 2});
  x.cumsum_(1);
  expect_values(x, {2, 2}, {1, 3, 3, 7});
  x.cumprod_(0);
  expect_values(x, {2, 2}, {1, 3, 3, 21});
  Tensor i = tensor<int32_t>({2, 3});
  i.cumsum_(0);  // stays int32, unlike cumsum's int64 result
  EXPECT_EQ(i.dtype(), kInt32);
  expect_values(i, {2}, {2, 5});
  Tensor eye2 = eye(2, std::nullopt, kFloat64);
  Tensor y = ones({2, 2}, kFloat64);
  y.addmm_(eye2, full({2, 2}, 2.0, kFloat64), 0.5, 3.0);  // 0.5 * 1 + 3 * 2
  expect_values(y, {2, 2}, {6.5, 6.5, 6.5, 6.5});
  Tensor v = ones({2}, kFloat64);
  v.addmv_(eye2, tensor<double>({1, 2}), 2.0);  // 2 * 1 + [1, 2]
  expect_values(v, {2}, {3, 4});
  y.addr_(tensor<double>({1, 0}), tensor<double>({0, 1}), 0.0);  // beta 0: just the outer product
  expect_values(y, {2, 2}, {0, 1, 0, 0});
  Tensor b = ones({2, 2, 2}, kFloat64);
  y.addbmm_(b, b);  // y + sum_b ones @ ones = y + 2 * 2
  expect_values(y, {2, 2}, {4, 5, 4, 4});
  Tensor z = zeros({2, 2, 2}, kFloat64);
  z.baddbmm_(b, b, 1, 0.5);
  expect_values(z, {2, 2, 2}, std::vector<double>(8, 1.0));
}

TEST(TensorOpInPlace, GradientFlowsThroughIndexAdd) {
  Tensor w = ones({3}, kFloat64).requires_grad_();
  Tensor y = zeros({2}, kFloat64).index_add(0, tensor<int64_t>({1, 1, 0}), w * 2.0);
  y.sum().backward();
  expect_values(w.grad(), {3}, {2, 2, 2});
}

// ---- empty and zero-size inputs never crash ----

TEST(TensorOpEmpty, ZeroSizeInputs) {
  Tensor e = empty({0, 3}, kFloat64);
  expect_values(cumprod(e, 0), {0, 3}, {});
  expect_values(cummax(e, 1).first, {0, 3}, {});
  expect_values(logcumsumexp(e, 0), {0, 3}, {});
  expect_values(roll(e, {2}, {0}), {0, 3}, {});
  expect_values(flipud(e), {0, 3}, {});
  expect_values(repeat_interleave(e, 2, 1), {0, 6}, {});
  expect_values(nansum(e, {0}), {3}, {0, 0, 0});
  // torch.quantile refuses any empty input, even along a dim of 3 slices of nothing.
  expect_error([&] { (void)quantile(e, 0.5, 0); }, {"quantile() input tensor must be non-empty", "[0, 3]"});
  EXPECT_TRUE(std::isnan(median(e).item<double>()));
  auto [v, inv, counts] = unique(e);
  expect_values(v, {0}, {});
  expect_values(counts, {0}, {});
  expect_values(bincount(empty({0}, kInt64), std::nullopt, 3), {3}, {0, 0, 0});
  expect_values(histc(e, 2), {2}, {0, 0});
  expect_values(einsum("ij,jk->ik", {e, ones({3, 2}, kFloat64)}), {0, 2}, {});
  expect_values(tensor_split(e, 2, 0)[1], {0, 3}, {});
  expect_values(diff(empty({0}, kFloat64)), {0}, {});
  expect_values(count_nonzero(e), {}, {0});
  expect_values(combinations(arange(2.0), 3), {0, 3}, {});
}

// NaN rules of the order statistics (values: PyTorch's indices for an
// all-NaN slice depend on its nth_element).
TEST(TensorOpValues, AllNaNSlices) {
  Tensor x = full({2, 3}, NAN, kFloat64);
  expect_values(nanmedian(x, 1).first, {2}, {NAN, NAN});
  expect_values(nanquantile(x, 0.5, 1), {2}, {NAN, NAN});
  expect_values(nanmean(x, {1}), {2}, {NAN, NAN});
  expect_values(nansum(x, {1}), {2}, {0, 0});
  expect_values(median(tensor<double>({1, NAN, 2})), {}, {NAN});
  expect_values(quantile(tensor<double>({1, NAN, 2}), 0.0), {}, {NAN});
}

// ---- integer paths and closed forms ----

TEST(TensorOpValues, IntegerAndClosedForms) {
  Tensor i = tensor<int64_t>({3, 1, 2});
  EXPECT_EQ(cumprod(i, 0).dtype(), kInt64);
  expect_values(cumprod(i, 0), {3}, {3, 3, 6});
  expect_values(cummin(i, 0).second, {3}, {0, 1, 1});
  expect_values(nansum(i), {}, {6});
  expect_values(repeat_interleave(tensor<int32_t>({2, 1})), {3}, {0, 0, 1});
  EXPECT_EQ(repeat_interleave(tensor<int32_t>({2, 1})).dtype(), kInt32);
  expect_values(trace(arange(9, kInt64).view({3, 3})), {}, {12});
  EXPECT_EQ(trace(arange(9, kInt64).view({3, 3})).dtype(), kInt64);
  // sum_{i,j} i*j over 0..2 and 0..3 = 3 * 6
  expect_values(einsum("i,j->", {arange(3.0), arange(4.0)}), {}, {18});
  expect_values(kron(eye(2, std::nullopt, kFloat64), ones({1, 2}, kFloat64)), {2, 4}, {1, 1, 0, 0, 0, 0, 1, 1});
  expect_values(matrix_power(tensor<double>({1, 1, 0, 1}, {2, 2}), 5), {2, 2}, {1, 5, 0, 1});
  expect_values(tril_indices(3, 3), {2, 6}, {0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2});
  // {1} alone would pick the sections overload: a one-index list is spelled as a vector.
  auto parts = vsplit(arange(6.0).view({3, 2}), std::vector<int64_t>{1});
  ASSERT_EQ(parts.size(), 2u);
  expect_values(parts[1], {2, 2}, {2, 3, 4, 5});
  expect_values(swapaxes(arange(6.0).view({2, 3}), 0, 1), {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_values(moveaxis(arange(6.0).view({1, 2, 3}), 0, 2), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
}

}  // namespace

namespace {

// Issue 20's index-like arguments: ignore_index is a target value, never
// wrapped (PyTorch compares it with the targets as given), so a negative one
// such as -1 simply marks those targets. Uniform logits over 3 classes give
// log(3) for every counted target.
TEST(NegativeDims, IgnoreIndexIsAValue) {
  Tensor logits = zeros({4, 3}, kFloat64);
  Tensor target = tensor<int64_t>({-1, 2, -1, 0});
  Tensor loss = nn::functional::cross_entropy(logits, target, {.ignore_index = -1});
  expect_values(loss, {}, {std::log(3.0)}, 1e-12, 1e-12);
  Tensor per = nn::functional::cross_entropy(logits, target, {.ignore_index = -1, .reduction = "none"});
  expect_values(per, {4}, {0, std::log(3.0), 0, std::log(3.0)}, 1e-12, 1e-12);
}

}  // namespace

// torch.inverse's edges and errors, as PyTorch 1.13 prints them (values and
// gradients against PyTorch are op_db's inverse.* cases).
TEST(Inverse, ErrorsEdgesAndNonFiniteValuesMatchPyTorch) {
  expect_error([&] { inverse(tensor<double>({1, 2, 2, 4}, {2, 2})); },
               {"linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input "
                "matrix is singular."});
  // Batched: the first singular element is named; an all-zero matrix fails at its first pivot.
  expect_error([&] { inverse(tensor<double>({1, 0, 0, 1, 0, 0, 0, 0, 1, 2, 2, 4}, {3, 2, 2})); },
               {"linalg.inv: (Batch element 1): The diagonal element 1 is zero"});
  expect_error([&] { inverse(tensor<int64_t>({1, 2, 3, 4}, {2, 2})); },
               {"linalg.inv", "Expected a floating point tensor", "int64"});
  expect_error([&] { inverse(ones({2, 2}, kBFloat16)); }, {"linalg.inv", "Low precision dtypes not supported"});
  expect_error([&] { inverse(ones({2, 3})); }, {"linalg.inv", "square matrices", "2 by 3"});
  expect_error([&] { inverse(ones({3})); }, {"linalg.inv", "at least 2 dimensions", "[3]"});
  expect_error([&] { matrix_power(tensor<int64_t>({2, 1, 1, 1}, {2, 2}), -3); }, {"linalg.inv", "int64"});
  EXPECT_EQ(inverse(zeros({2, 0, 0})).sizes(), (DimVector{2, 0, 0}));
  EXPECT_EQ(inverse(zeros({0, 3, 3})).sizes(), (DimVector{0, 3, 3}));
  // torch.inverse(tensor([[nan, 1], [0, 1]])) is all NaN; [[inf, 1], [0, 1]] gives [[0, 0], [0, 1]].
  for (double v : inverse(tensor<double>({NAN, 1, 0, 1}, {2, 2})).to_vector<double>()) EXPECT_TRUE(std::isnan(v));
  expect_values(inverse(tensor<double>({INFINITY, 1, 0, 1}, {2, 2})), {2, 2}, {0, 0, 0, 1});
  // torch.matrix_power(tensor([[2., 1.], [1., 1.]]), -3) = [[5, -8], [-8, 13]]; the inverse of a
  // permutation needs the row swap.
  expect_values(matrix_power(tensor<double>({2, 1, 1, 1}, {2, 2}), -3), {2, 2}, {5, -8, -8, 13});
  expect_values(inverse(tensor<float>({0, 1, 1, 0}, {2, 2})), {2, 2}, {0, 1, 1, 0});
}

// The batch runs in parallel; a large one equals its per-matrix inverses and
// A @ inverse(A) is the identity.
TEST(Inverse, BatchEqualsEachMatrixAndInvertsIt) {
  manual_seed(3);
  Tensor a = randn({64, 5, 5}, kFloat64) + eye(5, std::nullopt, kFloat64) * 5;
  Tensor inv = inverse(a);
  for (int64_t b : {0, 17, 63}) EXPECT_TRUE(equal(inv[b], inverse(a[b])));
  EXPECT_TRUE(allclose(matmul(a, inv), eye(5, std::nullopt, kFloat64).expand({64, 5, 5}), 0, 1e-12));
  EXPECT_TRUE(allclose(inverse(a.to(kFloat32)), inv.to(kFloat32), 1e-5, 1e-6));
}

// index_put's full slices (an undefined index): the errors name the shapes as
// PyTorch 1.13 does (torch.ops.aten.index_put(torch.zeros(2, 3, 4), [i, None,
// j], torch.ones(3, 2)): "shape mismatch: value tensor of shape [3, 2] cannot
// be broadcast to indexing result of shape [2, 3]"); values are op_db's
// index_put.slice_* cases.
TEST(IndexPut, FullSliceErrorsNameTheShapes) {
  Tensor x = zeros({2, 3, 4});
  Tensor i = tensor<int64_t>({0, 1}), j = tensor<int64_t>({1, 3});
  expect_error([&] { index_put(x, {i, Tensor(), j}, ones({3, 2})); },
               {"index_put", "value tensor of shape [3, 2]", "indexing result of shape [2, 3]"});
  expect_error([&] { index_put(x, {i}, ones({2, 4, 3})); },
               {"index_put", "value tensor of shape [2, 4, 3]", "indexing result of shape [2, 3, 4]"});
  expect_error([&] { index_put(x, {Tensor(), Tensor()}, ones({1})); }, {"index_put", "at least one index", "2 full"});
  expect_error([&] { index_put(x, {Tensor(), Tensor(), Tensor(), i}, ones({1})); },
               {"index_put", "too many indices", "dimension 3", "got 4"});
  expect_error([&] { index_put(x, {Tensor(), ones({3, 3}, kBool)}, ones({1})); },
               {"index_put", "mask [3, 3]", "[2, 3, 4] at index 2"});
  expect_error([&] { index_put(x, {Tensor(), tensor<int64_t>({3})}, ones({1})); },
               {"index_put", "index 3", "dimension 1", "size 3"});
  // x[:, i, j] = v: adjacent indices keep their place; x[i, :, j] = v puts them first.
  Tensor y = index_put(x, {Tensor(), i, j}, tensor<float>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(y.index({0, 1, 3}).item<float>(), 2.0f);
  EXPECT_EQ(y.index({1, 0, 1}).item<float>(), 3.0f);
  Tensor z = index_put(x, {i, Tensor(), j}, arange(6).to(kFloat32).view({2, 3}));
  EXPECT_EQ(z.index({1, 2, 3}).item<float>(), 5.0f);
  EXPECT_EQ(z.sum().item<float>(), 15.0f);
}

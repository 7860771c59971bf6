// Joining, splitting and shape-building ops: cat, stack, split, chunk, unbind,
// repeat, flip, pad, tril/triu, one_hot. Expected values are closed forms or
// come from PyTorch 1.13 (snippet named in a comment).
#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

// ---- cat / stack ----

TEST(ShapeCat, AlongEachDimAndNegativeDim) {
  Tensor a = arange(6.0).view({2, 3}), b = arange(6.0, 12.0).view({2, 3});
  expect_values(cat({a, b}), {4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  expect_values(cat({a, b}, -1), {2, 6}, {0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11});
  Tensor c = arange(2.0).view({2, 1});
  expect_values(cat({a, c, b}, 1), {2, 7}, {0, 1, 2, 0, 6, 7, 8, 3, 4, 5, 1, 9, 10, 11});
  expect_values(cat({a}), {2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(ShapeCat, NonContiguousInputs) {
  Tensor m = arange(6.0).view({2, 3});
  Tensor t = m.t();                                  // [3, 2]: 0 3 / 1 4 / 2 5
  Tensor s = arange(12.0).view({3, 4}).slice(1, 0, 4, 2);  // [3, 2]: 0 2 / 4 6 / 8 10
  expect_values(cat({t, s}, 1), {3, 4}, {0, 3, 0, 2, 1, 4, 4, 6, 2, 5, 8, 10});
  expect_values(cat({s, t}, 0), {6, 2}, {0, 2, 4, 6, 8, 10, 0, 3, 1, 4, 2, 5});
  Tensor e = ones({1}).expand({3, 2});
  expect_values(cat({e, t}, 0), {6, 2}, {1, 1, 1, 1, 1, 1, 0, 3, 1, 4, 2, 5});
}

TEST(ShapeCat, TypePromotionAndDtypes) {
  // torch.cat([bool [2,3], int32 [2,3]], dim=1) -> int32
  Tensor r = cat({ones({2, 3}, kBool), ones({2, 3}, kInt32)}, 1);
  EXPECT_EQ(r.dtype(), kInt32);
  expect_values(r, {2, 6}, std::vector<double>(12, 1.0));
  EXPECT_EQ(cat({ones({1}, kInt64), ones({1}, kFloat32)}).dtype(), kFloat32);
  EXPECT_EQ(cat({ones({1}, kFloat32), ones({1}, kFloat64)}).dtype(), kFloat64);
  Tensor b = cat({tensor<bool>({true}), tensor<bool>({false, true})});
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  expect_values(cat({tensor<int64_t>({-1}), tensor<int64_t>({1LL << 40})}), {2}, {-1, double(1LL << 40)});
}

TEST(ShapeCat, LegacyEmptyOneDimIsSkipped) {
  // torch.cat([torch.tensor([], dtype=float64), torch.ones(2, 2, dtype=int64)]) -> float64 [2, 2]
  Tensor r = cat({empty({0}, kFloat64), ones({2, 2}, kInt64)});
  EXPECT_EQ(r.dtype(), kFloat64);
  expect_values(r, {2, 2}, {1, 1, 1, 1});
  expect_values(cat({ones({2, 2}), empty({0}), ones({1, 2})}), {3, 2}, std::vector<double>(6, 1.0));
  // All skipped: torch.cat([torch.tensor([]), torch.tensor([])]) -> shape [0]
  expect_values(cat({empty({0}), empty({0})}), {0}, {});
  // A non-1-D empty tensor takes part: [0, 3] cat [2, 3] -> [2, 3]
  expect_values(cat({empty({0, 3}), ones({2, 3})}), {2, 3}, std::vector<double>(6, 1.0));
}

TEST(ShapeCat, LargeBatchMatchesReference) {
  // Big enough to run on several threads; each row equals its batch index.
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < 300; ++i) rows.push_back(full({1, 1000}, static_cast<double>(i)));
  Tensor r = cat(rows, 0);
  ASSERT_EQ(r.sizes().vec(), (std::vector<int64_t>{300, 1000}));
  std::vector<float> v = r.to_vector<float>();
  for (int64_t i = 0; i < 300; ++i) {
    ASSERT_EQ(v[i * 1000], static_cast<float>(i));
    ASSERT_EQ(v[i * 1000 + 999], static_cast<float>(i));
  }
}

TEST(ShapeCat, Errors) {
  expect_error([] { cat(std::vector<Tensor>{}); }, {"cat: expected a non-empty list of Tensors"});
  expect_error([] { cat({scalar_tensor(1.0), scalar_tensor(2.0)}); },
               {"zero-dimensional tensor (at position 0) cannot be concatenated"});
  expect_error([] { cat({ones({2, 3}), ones({2, 4})}); },
               {"cat: sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
                "tensor number 1 in the list"});
  expect_error([] { cat({ones({2, 3}), ones({2, 3, 1})}); },
               {"Tensors must have same number of dimensions: got 2 and 3"});
  expect_error([] { cat({ones({2, 3}), ones({2, 3})}, 2); }, {"cat", "dimension out of range"});
  EXPECT_THROW(cat({ones({2, 3}), ones({2, 3})}, -3), IndexError);
}

TEST(ShapeStack, NewDimAnywhere) {
  Tensor a = arange(3.0), b = arange(3.0, 6.0);
  expect_values(stack({a, b}), {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_values(stack({a, b}, 1), {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_values(stack({a, b}, -1), {3, 2}, {0, 3, 1, 4, 2, 5});
  // 0-dim tensors stack to 1-D; transposed inputs are fine.
  expect_values(stack({scalar_tensor(int64_t{4}), scalar_tensor(int64_t{5})}), {2}, {4, 5});
  Tensor m = arange(4.0).view({2, 2});
  expect_values(stack({m.t(), m}, 0), {2, 2, 2}, {0, 2, 1, 3, 0, 1, 2, 3});
  EXPECT_EQ(stack({ones({2}, kInt64), ones({2}, kFloat64)}).dtype(), kFloat64);
  expect_error([] { stack({ones({2, 3}), ones({2, 4})}); },
               {"stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1"});
  expect_error([] { stack(std::vector<Tensor>{}); }, {"stack expects a non-empty TensorList"});
  expect_error([] { stack({ones({2}), ones({2})}, 2); }, {"stack", "dimension out of range"});
}

// ---- split / chunk / unbind ----

TEST(ShapeSplit, SplitSizesAreViews) {
  Tensor a = arange(10);
  auto parts = split(a, 4);
  ASSERT_EQ(parts.size(), 3u);
  expect_values(parts[0], {4}, {0, 1, 2, 3});
  expect_values(parts[2], {2}, {8, 9});
  parts[1].fill_(-1);  // views share storage
  expect_values(a.narrow(0, 4, 4), {4}, {-1, -1, -1, -1});
  auto cols = split(arange(6).view({2, 3}), 2, -1);
  ASSERT_EQ(cols.size(), 2u);
  expect_values(cols[1], {2, 1}, {2, 5});
  auto ws = split_with_sizes(arange(5), {1, 0, 4});
  ASSERT_EQ(ws.size(), 3u);
  expect_values(ws[1], {0}, {});
  expect_values(ws[2], {4}, {1, 2, 3, 4});
  EXPECT_EQ(split(empty({0}), 0).size(), 1u);  // torch.split(torch.arange(0), 0)
}

TEST(ShapeSplit, Errors) {
  expect_error([] { split(arange(5), 0); },
               {"split_size can only be 0 if dimension size is 0, but got dimension size of 5"});
  expect_error([] { split(arange(5), -1); }, {"split_size be non-negative, but got split_size=-1"});
  expect_error([] { split_with_sizes(arange(5), {2, 2}); },
               {"split_with_sizes expects split_sizes to sum exactly to 5", "split_sizes=[2, 2]"});
  expect_error([] { split(scalar_tensor(1.0), 1); }, {"split", "1-dimensional"});
}

TEST(ShapeChunk, SizesLikePyTorch) {
  // torch.chunk(torch.arange(10), 4) -> sizes 3, 3, 3, 1
  auto c = chunk(arange(10), 4);
  ASSERT_EQ(c.size(), 4u);
  expect_values(c[3], {1}, {9});
  expect_values(c[1], {3}, {3, 4, 5});
  // torch.chunk(torch.arange(6).view(2,3), 6, dim=1) -> 3 pieces [2, 1]
  auto c6 = chunk(arange(6).view({2, 3}), 6, 1);
  ASSERT_EQ(c6.size(), 3u);
  expect_values(c6[2], {2, 1}, {2, 5});
  EXPECT_EQ(chunk(empty({0}), 3).size(), 3u);
  expect_error([] { chunk(arange(5), 0); }, {"chunk expects `chunks` to be greater than 0, got: 0"});
}

TEST(ShapeUnbind, SelectsEverySlice) {
  Tensor m = arange(6.0).view({2, 3});
  auto rows = unbind(m);
  ASSERT_EQ(rows.size(), 2u);
  expect_values(rows[1], {3}, {3, 4, 5});
  auto cols = unbind(m, -1);
  ASSERT_EQ(cols.size(), 3u);
  expect_values(cols[2], {2}, {2, 5});
  expect_error([] { unbind(scalar_tensor(3.0)); }, {"Dimension specified as 0 but tensor has no dimensions"});
}

// ---- repeat / flip ----

TEST(ShapeRepeat, TilesAndAddsLeadingDims) {
  // torch.tensor([[1,2],[3,4]]).repeat(2,1,3)
  Tensor r = tensor<int64_t>({1, 2, 3, 4}, {2, 2}).repeat({2, 1, 3});
  expect_values(r, {2, 2, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  // Transposed input, bool and zero repeats.
  expect_values(arange(4.0).view({2, 2}).t().repeat({1, 2}), {2, 4}, {0, 2, 0, 2, 1, 3, 1, 3});
  Tensor b = repeat(tensor<bool>({true, false}), {2});
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  expect_values(repeat(ones({2}), {0}), {0}, {});
  expect_values(scalar_tensor(2.5).repeat({2}), {2}, {2.5, 2.5});
  // The result owns its memory.
  Tensor src = ones({2});
  Tensor rep = src.repeat({1});
  rep.fill_(3);
  expect_values(src, {2}, {1, 1});
  expect_error([] { ones({3, 2}).repeat({2}); },
               {"number of dimensions of repeat dims (1) can not be smaller than number of dimensions of tensor (2)"});
  expect_error([] { ones({3, 2}).repeat({2, -1}); }, {"negative dimension -1"});
}

TEST(ShapeFlip, AnyDimsAnyLayout) {
  // torch.arange(6).view(2,3).flip([0,1])
  expect_values(flip(arange(6).view({2, 3}), {0, 1}), {2, 3}, {5, 4, 3, 2, 1, 0});
  expect_values(flip(arange(6).view({2, 3}), {-1}), {2, 3}, {2, 1, 0, 5, 4, 3});
  // torch.arange(6).view(2,3).t().flip([-1])
  expect_values(flip(arange(6).view({2, 3}).t(), {-1}), {3, 2}, {3, 0, 4, 1, 5, 2});
  Tensor b = flip(tensor<bool>({true, false, false}), {0});
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, false, true}));
  expect_values(flip(arange(4.0, kFloat64).view({2, 2}), {}), {2, 2}, {0, 1, 2, 3});
  expect_values(flip(empty({0, 2}), {0}), {0, 2}, {});
  expect_error([] { flip(ones({3, 2}), {0, -2}); }, {"dim 0 appears multiple times in the list of dims"});
  expect_error([] { flip(ones({3, 2}), {2}); }, {"flip", "dimension out of range"});
}

// ---- pad ----

TEST(ShapePad, ConstantWithValueAndNegativeCrop) {
  // F.pad(torch.arange(6.).view(2,3), (1,0,0,1), value=9.)
  expect_values(pad(arange(6.0).view({2, 3}), {1, 0, 0, 1}, "constant", 9), {3, 4},
                {9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9});
  // F.pad(torch.arange(12.).view(3,4), (-1,1,1,-2))
  expect_values(pad(arange(12.0).view({3, 4}), {-1, 1, 1, -2}), {2, 4}, {0, 0, 0, 0, 1, 2, 3, 0});
  // Transposed int input keeps its dtype.
  Tensor p = pad(arange(4).view({2, 2}).t(), {1, 1});
  EXPECT_EQ(p.dtype(), kInt64);
  expect_values(p, {2, 4}, {0, 0, 2, 0, 0, 1, 3, 0});
  expect_values(pad(ones({2}, kFloat64), {}), {2}, {1, 1});
}

TEST(ShapePad, ReflectAndReplicate) {
  // F.pad(torch.arange(6.).view(1,2,3), (2,1,1,1), mode='reflect')
  expect_values(pad(arange(6.0).view({1, 2, 3}), {2, 1, 1, 1}, "reflect"), {1, 4, 6},
                {5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1});
  // F.pad(torch.arange(6.).view(1,2,3), (1,2,0,1), mode='replicate')
  expect_values(pad(arange(6.0).view({1, 2, 3}), {1, 2, 0, 1}, "replicate"), {1, 3, 6},
                {0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5, 3, 3, 4, 5, 5, 5});
  // F.pad(torch.arange(5.).view(1,5), (-1,2), mode='reflect') / 'replicate'
  expect_values(pad(arange(5.0).view({1, 5}), {-1, 2}, "reflect"), {1, 6}, {1, 2, 3, 4, 3, 2});
  expect_values(pad(arange(5.0).view({1, 5}), {-1, 2}, "replicate"), {1, 6}, {1, 2, 3, 4, 4, 4});
}

TEST(ShapePad, Errors) {
  expect_error([] { pad(ones({3}), {1}); }, {"pad: padding length must be divisible by 2"});
  expect_error([] { pad(ones({3}), {1, 1, 1, 1}); }, {"padding length too large"});
  expect_error([] { pad(ones({3}), {-2, -2}); }, {"resulted in a negative output size"});
  expect_error([] { pad(arange(5.0).view({1, 5}), {5, 1}, "reflect"); },
               {"padding size should be less than the corresponding input dimension, but got: padding (5, 1) "
                "at dimension 1 of input [1, 5]"});
  expect_error([] { pad(ones({1, 5}), {1, 1}, "foo"); }, {"unrecognised padding mode 'foo'"});
}

// ---- tril / triu ----

TEST(ShapeTriangle, DiagonalOffsets) {
  Tensor m = arange(1.0, 13.0).view({3, 4});
  // torch.tril(m), torch.tril(m, -1), torch.triu(m, 1)
  expect_values(tril(m), {3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  expect_values(m.tril(-1), {3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expect_values(triu(m, 1), {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  expect_values(m.triu(5), {3, 4}, std::vector<double>(12, 0.0));
}

TEST(ShapeTriangle, BatchedTransposedDtypesAndInPlace) {
  // torch.triu(torch.arange(1., 9.).view(2,2,2).transpose(1,2))
  expect_values(triu(arange(1.0, 9.0).view({2, 2, 2}).transpose(1, 2)), {2, 2, 2}, {1, 3, 0, 4, 5, 7, 0, 8});
  Tensor b = tril(ones({2, 2}, kBool));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(tril(ones({2, 2}, kInt64)).dtype(), kInt64);
  Tensor m = ones({2, 3}, kFloat64);
  uint32_t v0 = m.version();
  m.triu_();
  expect_values(m, {2, 3}, {1, 1, 1, 0, 1, 1});
  EXPECT_GT(m.version(), v0);
  m.fill_(2);
  m.tril_(1);
  expect_values(m, {2, 3}, {2, 2, 0, 2, 2, 2});
  expect_error([] { tril(ones({3})); }, {"tril: input tensor must have at least 2 dimensions"});
}

// ---- one_hot ----

TEST(ShapeOneHot, InferredAndGivenClasses) {
  // F.one_hot(torch.tensor([[0,2],[1,0]]))
  Tensor r = one_hot(tensor<int64_t>({0, 2, 1, 0}, {2, 2}));
  EXPECT_EQ(r.dtype(), kInt64);
  expect_values(r, {2, 2, 3}, {1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0});
  // F.one_hot(torch.tensor(2), 3)
  expect_values(one_hot(scalar_tensor(int64_t{2}), 3), {3}, {0, 0, 1});
  expect_values(one_hot(flip(tensor<int64_t>({1, 0}), {0}), 2), {2, 2}, {1, 0, 0, 1});
  expect_values(one_hot(empty({0}, kInt64), 3), {0, 3}, {});
}

TEST(ShapeOneHot, Errors) {
  expect_error([] { one_hot(tensor<float>({1, 2})); }, {"one_hot: is only applicable to index tensor"});
  expect_error([] { one_hot(tensor<int32_t>({1, 2}), 3); }, {"only applicable to index tensor"});
  expect_error([] { one_hot(tensor<int64_t>({1, -2})); }, {"class values must be non-negative"});
  expect_error([] { one_hot(tensor<int64_t>({1, 5}), 3); }, {"class values must be smaller than num_classes"});
  expect_error([] { one_hot(empty({0}, kInt64)); }, {"can not infer total number of classes from empty tensor"});
}

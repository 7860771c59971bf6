// Pointwise ops of issue 20 beyond what the op database checks: gradients at
// the kinks (values from PyTorch 1.13's autograd at the same points), errors
// naming the op and the argument, in-place and Tensor-method forms, empty
// inputs, the shift semantics, and the random activations' statistics.
// Built into test_op_db beside the entries it complements (its natural home
// is tests/ops/; moving it there is a git mv).
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

// d(sum f(x)) / dx at the given float64 points.
std::vector<double> grad_at(const std::function<Tensor(const Tensor&)>& f, std::vector<double> points) {
  Tensor x = tensor<double>(points).requires_grad_();
  f(x).sum().backward();
  return x.grad().to_vector<double>();
}

}  // namespace

TEST(PointwiseKinks, GradientsMatchPyTorchAtTheKinks) {
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardtanh(x); }, {-1, 1, 0}), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(grad_at([](const Tensor& x) { return relu6(x); }, {0, 6, 3}), (std::vector<double>{0, 0, 1}));
  std::vector<double> hw = grad_at([](const Tensor& x) { return hardswish(x); }, {-3, 3, 0});
  EXPECT_NEAR(hw[0], -0.5, 1e-15);
  EXPECT_NEAR(hw[1], 1.5, 1e-15);
  EXPECT_NEAR(hw[2], 0.5, 1e-15);
  std::vector<double> hs = grad_at([](const Tensor& x) { return hardsigmoid(x); }, {-3, 3, 0});
  EXPECT_EQ(hs[0], 0);
  EXPECT_EQ(hs[1], 0);
  EXPECT_NEAR(hs[2], 1.0 / 6, 1e-7);
  EXPECT_EQ(grad_at([](const Tensor& x) { return threshold(x, 0.5, -2); }, {0.5, 1}), (std::vector<double>{0, 1}));
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardshrink(x); }, {-0.5, 0.5, 1}), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(grad_at([](const Tensor& x) { return softshrink(x); }, {-0.5, 0.5, 1}), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(grad_at([](const Tensor& x) { return elu(x); }, {0}), (std::vector<double>{1}));
  EXPECT_EQ(grad_at([](const Tensor& x) { return celu(x, 1.5); }, {0}), (std::vector<double>{1}));
  EXPECT_NEAR(grad_at([](const Tensor& x) { return selu(x); }, {0})[0], 1.7580993408473766, 1e-15);
  EXPECT_EQ(grad_at([](const Tensor& x) { return sinc(x); }, {0}), (std::vector<double>{0}));
  Tensor one = tensor<double>({1});
  // fmax sends a tie's gradient to self; maximum and logaddexp split it.
  EXPECT_EQ(grad_at([&](const Tensor& x) { return fmax(x, one); }, {1}), (std::vector<double>{1}));
  EXPECT_EQ(grad_at([&](const Tensor& x) { return maximum(x, one); }, {1}), (std::vector<double>{0.5}));
  EXPECT_EQ(grad_at([&](const Tensor& x) { return logaddexp(x, one); }, {1}), (std::vector<double>{0.5}));
}

TEST(PointwiseOps, ErrorsNameTheOpAndTheArgument) {
  Tensor i = tensor<int64_t>({1, 2});
  Tensor f = tensor<float>({1, 2});
  expect_error([&] { hypot(i, i); }, {"hypot", "floating-point"});
  expect_error([&] { logaddexp(i, i); }, {"logaddexp", "floating-point"});
  expect_error([&] { nextafter(i, i); }, {"nextafter"});
  expect_error([&] { bitwise_left_shift(f, f); }, {"bitwise_left_shift", "integer"});
  expect_error([&] { isclose(i, f); }, {"isclose", "same dtype"});
  expect_error([&] { isclose(f, f, -1.0); }, {"isclose", "rtol"});
  expect_error([&] { div(f, f, "round"); }, {"div", "rounding_mode", "round"});
  expect_error([&] { fmod(i, tensor<int64_t>({1, 0})); }, {"fmod", "ZeroDivisionError"});
  expect_error([&] { frac(i); }, {"frac", "floating-point"});
  expect_error([&] { glu(zeros({2, 3})); }, {"glu", "even", "3"});
  expect_error([&] { glu(zeros({})); }, {"glu", "scalars"});
  expect_error([&] { celu(f, 0); }, {"celu", "alpha"});
  expect_error([&] { softshrink(f, -1); }, {"softshrink", "lambda"});
  expect_error([&] { prelu(zeros({2, 3}), zeros({2})); }, {"prelu", "2", "3"});
  expect_error([&] { clamp(f, std::optional<Tensor>(), std::optional<Tensor>()); }, {"clamp", "min", "max"});
  Tensor ic = i.clone();
  expect_error([&] { ic.tan_(); }, {"tan_", "can't be cast"});
  Tensor small = tensor<float>({1, 2});
  expect_error([&] { small.atan2_(zeros({3, 2})); }, {"atan2_", "shape"});
}

TEST(PointwiseOps, ShiftsOutsideTheWidthAreDefined) {
  // PyTorch 2's results; 1.13 shifted as the CPU happened to.
  Tensor a = tensor<int64_t>({1, 1, -8, 8, -8});
  Tensor n = tensor<int64_t>({64, -1, 70, 64, 3});
  EXPECT_EQ(bitwise_left_shift(a, n).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, -64}));
  EXPECT_EQ(bitwise_right_shift(a, n).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, -1, 0, -1}));
  Tensor u = tensor<uint8_t>({255, 1});
  EXPECT_EQ(bitwise_right_shift(u, 7).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(bitwise_left_shift(u, 1).to_vector<uint8_t>(), (std::vector<uint8_t>{254, 2}));
}

TEST(PointwiseOps, DtypesFollowPyTorch) {
  Tensor i = tensor<int64_t>({1, 2});
  EXPECT_EQ(tan(i).dtype(), kFloat32);
  EXPECT_EQ(atan2(i, i).dtype(), kFloat32);
  EXPECT_EQ(xlogy(i, i).dtype(), kFloat32);
  EXPECT_EQ(float_power(tensor<float>({2}), 2).dtype(), kFloat64);
  EXPECT_EQ(div(i, i, "floor").dtype(), kInt64);
  EXPECT_EQ(div(i, i, "trunc").dtype(), kInt64);
  EXPECT_EQ(fmod(i, 2).dtype(), kInt64);
  EXPECT_EQ(fmod(i, 2.5).dtype(), kFloat32);
  EXPECT_EQ(signbit(tensor<float>({-0.0f})).dtype(), kBool);
  EXPECT_TRUE(signbit(tensor<float>({-0.0f})).item().to_bool());
  EXPECT_EQ(digamma(tensor<float>({1})).dtype(), kFloat32);
  EXPECT_NEAR(digamma(tensor<float>({1})).item().to_double(), -0.5772156649, 1e-6);
  EXPECT_EQ(nan_to_num(tensor<float>({INFINITY})).item().to_double(), std::numeric_limits<float>::max());
}

TEST(PointwiseOps, EmptyAndZeroSizeInputs) {
  Tensor e = zeros({0, 3});
  for (auto f : {tan, asin, atanh, log2, exp2, erfinv, lgamma, digamma, sinc, signbit, isinf, relu6, hardswish,
                 mish, logsigmoid, softsign})
    EXPECT_EQ(f(e).sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(atan2(e, zeros({3})).sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(isin(e, tensor<float>({1})).sizes().vec(), (std::vector<int64_t>{0, 3}));
  Tensor none = isin(tensor<float>({1, 2}), zeros({0}));
  EXPECT_EQ(none.to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(glu(zeros({0, 4})).sizes().vec(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(softmin(zeros({0, 4}), 1).sizes().vec(), (std::vector<int64_t>{0, 4}));
}

TEST(PointwiseOps, MethodsAndInPlaceForms) {
  Tensor x = tensor<double>({0.25, -0.5, 0.75});
  Tensor y = tensor<double>({1.5, 2, -3});
  EXPECT_TRUE(equal(x.atan2(y), atan2(x, y)));
  EXPECT_TRUE(equal(x.asin(), asin(x)));
  EXPECT_TRUE(equal(x.logit(0.1), logit(x, 0.1)));
  EXPECT_TRUE(equal(x.round(1), round(x, 1)));
  EXPECT_TRUE(equal(x.div(y, "floor"), div(x, y, "floor")));
  EXPECT_TRUE(equal(x.clamp(tensor<double>({0.0}), y), clamp(x, tensor<double>({0.0}), y)));
  EXPECT_TRUE(equal(x.isclose(x), ones({3}, kBool)));
  Tensor t = x.clone();
  t.tan_();
  EXPECT_TRUE(equal(t, tan(x)));
  t = x.clone();
  t.fmod_(0.3);
  EXPECT_TRUE(equal(t, fmod(x, 0.3)));
  t = y.clone();
  t.div_(tensor<double>({2.0}), "trunc");
  expect_values(t, {3}, {0, 1, -1});
  t = tensor<double>({NAN, INFINITY, 1});
  t.nan_to_num_(0, 5);
  expect_values(t, {3}, {0, 5, 1});
}

TEST(PointwiseOps, InPlaceUnderAutograd) {
  Tensor a = tensor<double>({0.1, 0.2}).requires_grad_();
  Tensor b = a * 1.0;
  b.sinh_();
  b.sum().backward();
  expect_values(a.grad(), {2}, {std::cosh(0.1), std::cosh(0.2)}, 1e-12, 1e-12);
}

TEST(GumbelSoftmax, SamplesFollowTheSoftmaxProbabilities) {
  manual_seed(0);
  // probabilities 1/6, 2/6, 3/6
  Tensor logits = log(tensor<double>({1, 2, 3})).expand({30000, 3});
  Tensor hard = gumbel_softmax(logits, 1.0, true);
  std::vector<double> freq = hard.mean(std::vector<int64_t>{0}).to_vector<double>();
  // standard error ~ sqrt(p (1 - p) / n) < 3e-3
  EXPECT_NEAR(freq[0], 1.0 / 6, 0.015);
  EXPECT_NEAR(freq[1], 2.0 / 6, 0.015);
  EXPECT_NEAR(freq[2], 3.0 / 6, 0.015);
  // one-hot rows
  expect_values(hard.sum(std::vector<int64_t>{1}).slice(0, 0, 4), {4}, {1, 1, 1, 1});
  Tensor soft = gumbel_softmax(logits, 1.0, false);
  EXPECT_GT(soft.min().item().to_double(), 0.0);
}

TEST(RRelu, TrainingSlopesAreUniform) {
  manual_seed(0);
  Tensor x = full({40000}, -2.0, kFloat64);
  Tensor y = rrelu(x, 0.1, 0.5, true);
  std::vector<double> v = y.to_vector<double>();
  double lo = 0, hi = -1;
  for (double s : v) {
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  EXPECT_GE(lo, -1.0);  // slope <= 0.5
  EXPECT_LE(hi, -0.2);  // slope >= 0.1
  EXPECT_NEAR(y.mean().item().to_double(), -0.6, 0.01);
}

TEST(PointwiseOps, AliasesAndFunctionalInPlaceForms) {
  Tensor x = tensor<double>({-0.5, 0.25, 0.75});
  Tensor y = tensor<double>({2, -1, 0.5});
  EXPECT_TRUE(equal(arccos(x), acos(x)));
  EXPECT_TRUE(equal(arctan2(x, y), atan2(x, y)));
  EXPECT_TRUE(equal(absolute(x), abs(x)));
  EXPECT_TRUE(equal(fix(y * 1.5), trunc(y * 1.5)));
  EXPECT_TRUE(equal(clip(x, 0.0, 0.5), clamp(x, 0.0, 0.5)));
  EXPECT_TRUE(equal(divide(x, y, "floor"), div(x, y, "floor")));
  EXPECT_TRUE(equal(greater_equal(x, y), ge(x, y)));
  Tensor t = x.clone();
  Tensor& r = hardtanh_(t, -0.2, 0.2);
  EXPECT_EQ(&r, &t);
  expect_values(t, {3}, {-0.2, 0.2, 0.2});
  t = x.clone();
  threshold_(t, 0.3, -7);
  expect_values(t, {3}, {-7, -7, 0.75});
  t = x.clone();
  selu_(t);
  EXPECT_TRUE(equal(t, selu(x)));
}

TEST(PointwiseOps, FunctionalInPlaceUnderAutograd) {
  Tensor a = tensor<double>({-0.5, 0.3}).requires_grad_();
  Tensor b = a * 1.0;
  elu_(b, 2.0);
  b.sum().backward();
  expect_values(a.grad(), {2}, {2 * std::exp(-0.5), 1}, 1e-12, 1e-12);
}

// Pointwise ops of issue 20 beyond what the op database checks: gradients at
// the kinks (values from PyTorch 1.13's autograd at the same points), errors
// naming the op and the argument, in-place and Tensor-method forms, empty
// inputs, the shift semantics, and the random activations' statistics.
// Built into test_op_db beside the entries it complements (its natural home
// is tests/ops/; moving it there is a git mv).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

// The methods and `_` forms tests/data/op_db/tensor_methods.txt asks for
// beyond the ones above; values as PyTorch 1.13 gives them (Python's floor
// division and modulo, comparisons writing 1 and 0 in self's dtype).
TEST(PointwiseOps, MethodFormsAPortReachesFor) {
  Tensor x = tensor<double>({0.25, -0.5, 0.75}), y = tensor<double>({1.5, 2, -3});
  Tensor i = tensor<int64_t>({5, -7, 9}), j = tensor<int64_t>({12, -7, 0});
  EXPECT_TRUE(equal(x.addcmul(x, y, 2), addcmul(x, x, y, 2)));
  EXPECT_TRUE(equal(x.addcdiv(x, y), addcdiv(x, x, y)));
  EXPECT_TRUE(equal(x.lerp(y, 0.25), lerp(x, y, 0.25)));
  EXPECT_EQ(i.floor_divide(2).to_vector<int64_t>(), (std::vector<int64_t>{2, -4, 4}));
  EXPECT_EQ(i.bitwise_and(j).to_vector<int64_t>(), (std::vector<int64_t>{4, -7, 0}));
  EXPECT_EQ(i.bitwise_xor(j).to_vector<int64_t>(), (std::vector<int64_t>{9, 0, 9}));
  EXPECT_TRUE(equal(x.logical_and(y), logical_and(x, y)));
  EXPECT_TRUE(equal(x.gt(0), tensor<bool>({true, false, true})));
  EXPECT_TRUE(x.allclose(x + 1e-9) && !x.equal(x + 1e-9) && x.equal(x.clone()));
  EXPECT_EQ(x.broadcast_to({2, 3}).sizes().vec(), (std::vector<int64_t>{2, 3}));
  expect_values(x.where(x.gt(0), 0.0), {3}, {0.25, 0, 0.75});
  expect_values(x.hardshrink(0.5), {3}, {0, 0, 0.75});
  expect_values(x.prelu(tensor<double>({0.1})), {3}, {0.25, -0.05, 0.75});

  Tensor t = x.clone();
  t.eq_(tensor<double>({0.25, 0.5, 0.75}));  // 1 and 0 in float64
  expect_values(t, {3}, {1, 0, 1});
  t = x.clone();
  t.lt_(0.5);
  expect_values(t, {3}, {1, 1, 0});
  Tensor k = i.clone();
  k.floor_divide_(2);
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{2, -4, 4}));
  k = i.clone();
  k.remainder_(3);
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 0}));
  k = i.clone();
  k.bitwise_not_();
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{-6, 6, -10}));
  for (auto [inplace, expected] : std::vector<std::pair<std::function<void(Tensor&)>, Tensor>>{
           {[](Tensor& a) { a.ceil_(); }, ceil(x)},          {[](Tensor& a) { a.floor_(); }, floor(x)},
           {[](Tensor& a) { a.round_(1); }, round(x, 1)},     {[](Tensor& a) { a.sin_(); }, sin(x)},
           {[](Tensor& a) { a.cos_(); }, cos(x)},            {[](Tensor& a) { a.erf_(); }, erf(x)},
           {[](Tensor& a) { a.log1p_(); }, log1p(x)},        {[](Tensor& a) { a.reciprocal_(); }, reciprocal(x)},
           {[](Tensor& a) { a.sign_(); }, sign(x)},          {[](Tensor& a) { a.square_(); }, square(x)},
           {[](Tensor& a) { a.logical_not_(); }, logical_not(x).to(kFloat64)}}) {
    Tensor a = x.clone();
    inplace(a);
    EXPECT_TRUE(equal(a, expected)) << a << " vs " << expected;
  }
  expect_error([] { tensor<int64_t>({1, 2}).sin_(); }, {"sin_: result type float32 can't be cast", "int64"});

  // In-place views reshape the tensor itself: every handle sees it.
  Tensor v = zeros({2, 3});
  Tensor alias = v;
  v.unsqueeze_(0);
  EXPECT_EQ(alias.sizes().vec(), (std::vector<int64_t>{1, 2, 3}));
  v.squeeze_();
  v.t_();
  EXPECT_EQ(alias.sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(alias.strides().vec(), (std::vector<int64_t>{1, 3}));
  v.transpose_(0, 1).swapdims_(1, 0);
  EXPECT_EQ(v.strides().vec(), (std::vector<int64_t>{1, 3}));
  Tensor leaf = zeros({2}).requires_grad_();
  expect_error([&] { leaf.unsqueeze_(0); }, {"unsqueeze_: in-place view ops are not supported", "requires grad"});
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

// torch.abs_(x), torch.relu_(x), F.elu_(x), torch.clamp_(x, 0, 1), ...: each
// free in-place function writes its out-of-place op's value into x (whose
// values op_db checks against PyTorch) and returns x itself.
TEST(PointwiseOps, FreeInPlaceFunctionsWriteTheirOpsValueIntoX) {
  using Inplace = Tensor& (*)(Tensor&);
  using Outplace = Tensor (*)(const Tensor&);
  struct Row {
    const char* name;
    Inplace inplace;
    Outplace outplace;
    std::vector<double> at;
  };
  const std::vector<double> unit = {0.25, -0.5, 0.75}, positive = {0.25, 1.5, 3}, above_one = {1.25, 2, 3};
  const std::vector<Row> rows = {
      {"abs_", abs_, abs, unit},           {"neg_", neg_, neg, unit},
      {"reciprocal_", reciprocal_, reciprocal, unit}, {"square_", square_, square, unit},
      {"sqrt_", sqrt_, sqrt, positive},    {"rsqrt_", rsqrt_, rsqrt, positive},
      {"exp_", exp_, exp, unit},           {"exp2_", exp2_, exp2, unit},
      {"expm1_", expm1_, expm1, unit},     {"log_", log_, log, positive},
      {"log2_", log2_, log2, positive},    {"log10_", log10_, log10, positive},
      {"log1p_", log1p_, log1p, unit},     {"sin_", sin_, sin, unit},
      {"cos_", cos_, cos, unit},           {"tan_", tan_, tan, unit},
      {"asin_", asin_, asin, unit},        {"acos_", acos_, acos, unit},
      {"atan_", atan_, atan, unit},        {"sinh_", sinh_, sinh, unit},
      {"cosh_", cosh_, cosh, unit},        {"asinh_", asinh_, asinh, unit},
      {"acosh_", acosh_, acosh, above_one}, {"atanh_", atanh_, atanh, unit},
      {"sinc_", sinc_, sinc, unit},        {"erf_", erf_, erf, unit},
      {"erfc_", erfc_, erfc, unit},        {"deg2rad_", deg2rad_, deg2rad, unit},
      {"rad2deg_", rad2deg_, rad2deg, unit}, {"ceil_", ceil_, ceil, positive},
      {"floor_", floor_, floor, positive}, {"trunc_", trunc_, trunc, positive},
      {"frac_", frac_, frac, positive},    {"round_", round_, round, positive},
      {"sigmoid_", sigmoid_, sigmoid, unit}, {"tanh_", tanh_, tanh, unit},
      {"relu_", relu_, relu, unit},        {"selu_", selu_, selu, unit},
  };
  for (const Row& r : rows) {
    Tensor x = tensor<double>(r.at);
    Tensor& back = r.inplace(x);
    EXPECT_EQ(&back, &x) << r.name;
    EXPECT_TRUE(allclose(x, r.outplace(tensor<double>(r.at)), 0, 0)) << r.name;
  }
  // The ones with arguments. torch.xlogy_(tensor([0., 2.]), 2.) = [0, 1.3863].
  Tensor x = tensor<double>({0, 2});
  xlogy_(x, 2.0);
  expect_values(x, {2}, {0, 2 * std::log(2.0)});
  x = tensor<double>({-1, 0.25, 3});
  clamp_(x, 0.0, 0.5);
  expect_values(x, {3}, {0, 0.25, 0.5});
  x = tensor<double>({-1, 0.25, 3});
  clamp_(x, std::optional<Tensor>(tensor<double>({0, 0.5, 0})), std::optional<Tensor>(tensor<double>({1, 1, 2})));
  expect_values(x, {3}, {0, 0.5, 2});
  x = tensor<double>({0.5, NAN, INFINITY});
  nan_to_num_(x, 0.0, 9.0);
  expect_values(x, {3}, {0.5, 0, 9});
  x = tensor<double>({1.25, 2.5});
  round_(x, 1);
  expect_values(x, {2}, {1.2, 2.5});
  x = tensor<double>({0.25, 0.5});
  logit_(x);
  expect_values(x, {2}, {std::log(1.0 / 3), 0});
  x = zeros({2}, kFloat64);
  addmv_(x, tensor<double>({1, 2, 3, 4}).view({2, 2}), tensor<double>({1, -1}), 1, 2);
  expect_values(x, {2}, {-2, -2});
  x = zeros({3}, kFloat64);
  index_put_(x, {tensor<int64_t>({0, 2, 0})}, tensor<double>({1, 2, 3}), true);
  expect_values(x, {3}, {4, 0, 2});

  // Under autograd a non-leaf takes the op's history: relu_'s gradient is relu's.
  Tensor a = tensor<double>({0.5, -1, 2}).requires_grad_();
  Tensor b = a * 1;
  relu_(b).sum().backward();
  expect_values(a.grad(), {3}, {1, 0, 1});
  expect_error([&] { relu_(a); }, {"relu_", "leaf"});

  // dropout_: dropout's mask for the same generator state; identity when not
  // training; alpha_dropout_ is not training by default, as F.alpha_dropout.
  Tensor d = ones({64}, kFloat64);
  Generator g1(7), g2(7);
  dropout_(d, 0.5, true, &g1);
  EXPECT_TRUE(equal(d, dropout(ones({64}, kFloat64), 0.5, true, &g2)));
  EXPECT_GT(d.eq(0).sum().item<int64_t>(), 0);
  Tensor e = tensor<double>({1, 2});
  dropout_(e, 0.5, false);
  alpha_dropout_(e);
  expect_values(e, {2}, {1, 2});
  Tensor f = ones({64}, kFloat64);
  Generator g3(3), g4(3);
  alpha_dropout_(f, 0.25, true, &g3);
  EXPECT_TRUE(equal(f, alpha_dropout(ones({64}, kFloat64), 0.25, true, &g4)));
}

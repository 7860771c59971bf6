// Elementwise ops beyond the golden table: where, clamp, masked_fill,
// in-place forms, dtype casts, broadcasting and errors.
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

TEST(Elementwise, BroadcastingShapes) {
  Tensor a = arange(3).to(kFloat32).reshape({3, 1});
  Tensor b = arange(4).to(kFloat32);
  expect_values(a + b, {3, 4}, {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5});
  expect_values(a * b, {3, 4}, {0, 0, 0, 0, 0, 1, 2, 3, 0, 2, 4, 6});
  expect_error([&] { (void)(zeros({2, 3}) + zeros({4})); },
               {"add", "[2, 3]", "[4]", "cannot be broadcast"});
  // Large tensors go through the parallel, vectorised path.
  Tensor big = ones({1 << 20}) * 3 - 1;
  EXPECT_EQ(big.to_vector<float>()[123457], 2.0f);
}

TEST(Elementwise, WhereClampMaskedFill) {
  Tensor x = tensor<float>({-2, -0.5, 0, 1.5, NAN});
  expect_values(where(x > 0, x, scalar_tensor(0.0)), {5}, {0, 0, 0, 1.5, 0});
  expect_values(where(x > 0, x, 10.0), {5}, {10, 10, 10, 1.5, 10});
  expect_values(clamp(x, -1.0, 1.0), {5}, {-1, -0.5, 0, 1, NAN});
  expect_values(clamp_min(x, 0), {5}, {0, 0, 0, 1.5, NAN});
  EXPECT_EQ(clamp(arange(5), 1, 3).dtype(), kInt64);
  EXPECT_EQ(clamp(arange(5), 0.5, std::nullopt).dtype(), kFloat32);
  expect_values(masked_fill(x, isnan(x), 9), {5}, {-2, -0.5, 0, 1.5, 9});
  Tensor m = tensor<bool>({true, false}).reshape({2, 1});
  expect_values(masked_fill(zeros({2, 3}), m, -1), {2, 3}, {-1, -1, -1, 0, 0, 0});
  expect_error([&] { (void)masked_fill(x, zeros({5}), 1); }, {"masked_fill", "bool mask", "float32"});
  expect_error([&] { (void)where(zeros({5}), x, x); }, {"where", "bool", "float32"});
}

TEST(Elementwise, InPlaceOpsAndTheirErrors) {
  Tensor a = ones({2, 3});
  uint32_t v0 = a.version();
  a.add_(arange(3).to(kFloat32));
  a.mul_(2);
  a -= 1;
  a /= tensor<float>({1, 2, 4});
  EXPECT_EQ(a.version(), v0 + 4);
  expect_values(a, {2, 3}, {1, 1.5, 1.25, 1, 1.5, 1.25});
  Tensor i = arange(3);
  i += 2;
  expect_values(i, {3}, {2, 3, 4});
  expect_error([&] { i.mul_(1.5); }, {"mul_", "result type float32 can't be cast to the desired output type int64"});
  expect_error([&] { a.add_(ones({2, 2, 3})); }, {"add_", "output with shape [2, 3] doesn't match the broadcast shape"});
  Tensor f = tensor<float>({-1, 4});
  f.relu_();
  f.sqrt_();
  expect_values(f, {2}, {0, 2});
  f.clamp_(0.5, 1.0);
  expect_values(f, {2}, {0.5, 1});
  Tensor t = zeros({3, 2}).t();  // in-place on a non-contiguous view
  t.add_(tensor<float>({1, 2, 3}));
  expect_values(t, {2, 3}, {1, 2, 3, 1, 2, 3});
  Tensor mf = zeros({3});
  mf.masked_fill_(tensor<bool>({false, true, false}), 4);
  expect_values(mf, {3}, {0, 4, 0});
}

TEST(Elementwise, DtypeConversionAndBoolRules) {
  expect_values(tensor<float>({-1.7f, 2.9f, 0.0f}).to(kInt32), {3}, {-1, 2, 0});
  expect_values(tensor<float>({-1.7f, 0.0f}).to(kBool), {2}, {1, 0});
  expect_values(tensor<int64_t>({300}).to(kUInt8), {1}, {44});  // wraps like PyTorch
  expect_values(tensor<float>({1.0f / 3}).to(kBFloat16).to(kFloat32), {1}, {0.333984375}, 0, 1e-9);
  expect_error([] { (void)(tensor<bool>({true}) - tensor<bool>({false})); }, {"sub", "two bool tensors"});
  expect_error([] { (void)-tensor<bool>({true}); }, {"neg", "bool tensor", "logical_not"});
  expect_error([] { (void)bitwise_and(zeros({2}), zeros({2})); }, {"bitwise_and", "float32"});
  expect_error([] { (void)pow(arange(3), -1); }, {"pow", "negative integer powers"});
  expect_error([] { (void)floor_divide(arange(3), 0); }, {"ZeroDivisionError"});
  expect_values(pow(2.0, arange(4)), {4}, {1, 2, 4, 8});
  expect_values(1.0 / tensor<float>({2, 4}), {2}, {0.5, 0.25});
  expect_values(10 - arange(3), {3}, {10, 9, 8});
  expect_values(add(ones({2}), ones({2}), 3), {2}, {4, 4});
  EXPECT_TRUE(allclose(tensor<float>({1.0f, 2.0f}), tensor<float>({1.0f, 2.000001f})));
  EXPECT_FALSE(allclose(tensor<float>({1.0f}), tensor<float>({1.1f})));
  EXPECT_TRUE(equal(arange(3), arange(3)));
  expect_values(isfinite(tensor<float>({1, INFINITY, NAN})), {3}, {1, 0, 0});
  expect_values(gelu(tensor<double>({1.0})), {1}, {0.8413447460685429});  // x * Phi(x)
}

// Note [flat float loops]: small same-shaped contiguous float32 operands skip
// the iterator (scalar loop under 8 elements, the vector loop up to 4096),
// bigger ones keep it. Every size around both boundaries must give the
// correctly rounded float result (computed here in double and rounded once,
// which equals float arithmetic for one + - * /), and non-contiguous or
// mixed-dtype operands still take the general path.
TEST(Elementwise, FlatFloatLoopsMatchDoubleArithmetic) {
  for (int64_t n : {1, 2, 7, 8, 9, 31, 4095, 4096, 4097}) {
    Tensor a = randn({n});
    Tensor b = randn({n}).abs() + 0.5;
    std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
    std::vector<float> s = (a + b).to_vector<float>(), d = (a - b).to_vector<float>(),
                       m = (a * b).to_vector<float>(), q = (a / b).to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      double x = va[i], y = vb[i];
      ASSERT_EQ(s[i], static_cast<float>(x + y)) << "add n=" << n << " i=" << i;
      ASSERT_EQ(d[i], static_cast<float>(x - y)) << "sub n=" << n << " i=" << i;
      ASSERT_EQ(m[i], static_cast<float>(x * y)) << "mul n=" << n << " i=" << i;
      ASSERT_EQ(q[i], static_cast<float>(x / y)) << "div n=" << n << " i=" << i;
    }
  }
  Tensor t = arange(6).to(kFloat32).reshape({2, 3});
  expect_values(t.t() + t.t(), {3, 2}, {0, 6, 2, 8, 4, 10});  // strided: the iterator
  Tensor half = tensor<double>({0.5, 1.5});
  Tensor r = tensor<float>({1, 2}) + half;  // float + double promotes
  EXPECT_EQ(r.dtype(), kFloat64);
  expect_values(r, {2}, {1.5, 3.5});
  expect_values(tensor<float>({1.0f}) / tensor<float>({0.0f}), {1}, {INFINITY});
}

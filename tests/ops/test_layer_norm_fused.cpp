// layer_norm's float32 row kernels against the composite formula evaluated in
// float64 (the path every other dtype takes, itself checked against PyTorch
// in tests/nn and op_db): outputs, the three gradients, double backward.
#include <gtest/gtest.h>

#include "ember/autograd/autograd.h"
#include "ember/ember.h"

using namespace ember;

namespace {

struct Case {
  std::vector<int64_t> shape, normalized;
  bool weight, bias, transposed;
};

// Max |a - b| / (1 + |b|) over the elements.
double rel_err(const Tensor& a, const Tensor& b) {
  return max(abs(a.to(kFloat64) - b) / (abs(b) + 1)).item<double>();
}

void check_case(const Case& c) {
  SCOPED_TRACE(::testing::Message() << "shape " << ::testing::PrintToString(c.shape) << " normalized "
                                    << ::testing::PrintToString(c.normalized) << " weight " << c.weight << " bias " << c.bias << " transposed "
                                    << c.transposed);
  Generator gen(7);
  Tensor x64 = randn(c.shape, kFloat64, &gen) * 3 + 0.5;
  if (c.transposed) x64 = x64.transpose(0, 1).contiguous().transpose(0, 1);  // a strided view, same values
  Tensor w64 = c.weight ? randn(c.normalized, kFloat64, &gen) : Tensor();
  Tensor b64 = c.bias ? randn(c.normalized, kFloat64, &gen) : Tensor();
  Tensor dy64 = randn(c.shape, kFloat64, &gen);

  auto leaf = [](const Tensor& t, ScalarType dt) { return t.defined() ? t.to(dt).requires_grad_(true) : Tensor(); };
  Tensor x = leaf(x64, kFloat32), w = leaf(w64, kFloat32), b = leaf(b64, kFloat32);
  Tensor xr = leaf(x64, kFloat64), wr = leaf(w64, kFloat64), br = leaf(b64, kFloat64);
  Tensor y = layer_norm(x, c.normalized, w, b, 1e-5);
  Tensor yr = layer_norm(xr, c.normalized, wr, br, 1e-5);
  ASSERT_EQ(y.grad_fn()->name(), std::string("NativeLayerNormBackward0"));
  EXPECT_LT(rel_err(y.detach(), yr.detach()), 2e-6);
  (y * dy64.to(kFloat32)).sum().backward();
  (yr * dy64).sum().backward();
  EXPECT_LT(rel_err(x.grad(), xr.grad()), 2e-5);
  if (c.weight) {
    EXPECT_LT(rel_err(w.grad(), wr.grad()), 2e-5);
  }
  if (c.bias) {
    EXPECT_LT(rel_err(b.grad(), br.grad()), 2e-5);
  }
}

}  // namespace

TEST(LayerNormFused, MatchesTheFloat64Composite) {
  const std::vector<Case> cases = {
      {{5, 37}, {37}, true, true, false},             // a row shorter than some vectors, with a tail
      {{300, 64}, {64}, true, true, false},           // several 64-row blocks of weight-gradient sums
      {{3, 4, 64}, {64}, true, false, false},         // weight without bias
      {{2, 3, 4, 5}, {4, 5}, false, false, false},    // two normalized dims, no affine
      {{6, 70, 48}, {48}, true, true, true},          // a strided input
      {{1, 1000}, {1000}, false, true, false},        // one long row, bias only
  };
  for (const Case& c : cases) check_case(c);
}

TEST(LayerNormFused, KeepsPrecisionUnderALargeOffset) {
  // Values 1e4 + N(0, 1): a one-pass E[x^2] - E[x]^2 in float32 loses all
  // digits here; the two-pass moments do not.
  Generator gen(3);
  Tensor x64 = randn({8, 256}, kFloat64, &gen) + 1e4;
  Tensor y = layer_norm(x64.to(kFloat32), {256}, Tensor(), Tensor(), 1e-5);
  Tensor yr = layer_norm(x64.to(kFloat32).to(kFloat64), {256}, Tensor(), Tensor(), 1e-5);
  EXPECT_LT(rel_err(y, yr), 1e-5);
}

TEST(LayerNormFused, DoubleBackwardMatchesTheComposite) {
  Generator gen(9);
  Tensor x64 = randn({6, 16}, kFloat64, &gen), w64 = randn({16}, kFloat64, &gen), v = randn({6, 16}, kFloat64, &gen);
  auto second = [&](ScalarType dt) {
    Tensor x = x64.to(dt).requires_grad_(true), w = w64.to(dt).requires_grad_(true);
    Tensor y = layer_norm(x, {16}, w, Tensor(), 1e-5);
    auto g = autograd::grad({(y * y).sum()}, {x, w}, {}, std::nullopt, /*create_graph=*/true);
    // d/dx of <dL/dx, v> + <dL/dw, 1>: second derivatives through the row statistics.
    Tensor s = (g[0] * v.to(dt)).sum() + g[1].sum();
    return autograd::grad({s}, {x, w});
  };
  auto f = second(kFloat32), r = second(kFloat64);
  EXPECT_LT(rel_err(f[0], r[0]), 1e-4);
  EXPECT_LT(rel_err(f[1], r[1]), 1e-4);
}

TEST(LayerNormFused, WeightGradientDoesNotDependOnTheThreadCount) {
  Generator gen(4);
  Tensor x = randn({1000, 96}, kFloat32, &gen), dy = randn({1000, 96}, kFloat32, &gen);
  auto grads = [&](int threads) {
    ThreadLimitGuard limit(threads);
    Tensor w = ones({96}).requires_grad_(true), b = zeros({96}).requires_grad_(true);
    (layer_norm(x, {96}, w, b, 1e-5) * dy).sum().backward();
    return std::make_pair(w.grad(), b.grad());
  };
  auto one = grads(1), two = grads(2);
  EXPECT_TRUE(equal(one.first, two.first));
  EXPECT_TRUE(equal(one.second, two.second));
}

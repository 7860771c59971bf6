// GELU's one-pass float32 backward against the composite derivative
// evaluated in float64 (the path other dtypes take, checked against PyTorch
// in op_db), for both approximations; and double backward, which takes the
// composite.
#include <gtest/gtest.h>

#include "ember/autograd/autograd.h"
#include "ember/ember.h"

using namespace ember;

namespace {

double rel_err(const Tensor& a, const Tensor& b) {
  return max(abs(a.to(kFloat64) - b) / (abs(b) + 1)).item<double>();
}

}  // namespace

TEST(GeluBackward, OnePassMatchesTheFloat64Composite) {
  Generator gen(2);
  // Tails of the erf and tanh (|x| up to ~12) and the region near 0.
  Tensor x64 = randn({257, 33}, kFloat64, &gen) * 4;
  Tensor dy64 = randn({257, 33}, kFloat64, &gen);
  for (const char* approx : {"none", "tanh"}) {
    SCOPED_TRACE(approx);
    Tensor x = x64.to(kFloat32).requires_grad_(true), xr = x64.detach().requires_grad_(true);
    (gelu(x, approx) * dy64.to(kFloat32)).sum().backward();
    (gelu(xr, approx) * dy64).sum().backward();
    EXPECT_LT(rel_err(x.grad(), xr.grad()), 1e-5);
  }
}

TEST(GeluBackward, StridedGradientAndDoubleBackward) {
  Generator gen(8);
  Tensor x64 = randn({16, 24}, kFloat64, &gen);
  for (const char* approx : {"none", "tanh"}) {
    SCOPED_TRACE(approx);
    auto second = [&](ScalarType dt) {
      Tensor x = x64.to(dt).detach().requires_grad_(true);
      Tensor y = gelu(x.t(), approx);  // a strided input and gradient
      auto g = autograd::grad({(y * y).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true);
      return std::make_pair(g[0].detach(), autograd::grad({g[0].sum()}, {x})[0]);
    };
    auto f = second(kFloat32), r = second(kFloat64);
    EXPECT_LT(rel_err(f.first, r.first), 1e-5);
    EXPECT_LT(rel_err(f.second, r.second), 1e-4);
  }
}

TEST(GeluForward, VectorErfIsWithinItsBoundOfTheExactGelu) {
  // Unary::Gelu's erf (Abramowitz and Stegun 7.1.26, as PyTorch's vectorized
  // GELU) is within 1.5e-7 of erf in exact arithmetic; evaluated in float32
  // add a few ulps of 1: 4e-7 (measured 3.2e-7 on these points). The output
  // is then within 2e-7 |x| plus float32 rounding of the exact GELU.
  Generator gen(5);
  Tensor x64 = randn({4099}, kFloat64, &gen) * 5;
  Tensor y = gelu(x64.to(kFloat32)).to(kFloat64), yr = gelu(x64.to(kFloat32).to(kFloat64));
  Tensor bound = abs(x64) * 2e-7 + abs(yr) * 1.2e-7 + 1e-37;
  EXPECT_TRUE(all(le(abs(y - yr), bound)).item<bool>()) << max(abs(y - yr) - bound).item<double>();
}

// The fused batch_norm kernels against the composite formula (the same
// math through broadcast ops, run here on float64 copies), and double
// backward through the fused node.
#include "ember/autograd/gradcheck.h"
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {
// The composite definition, in float64.
Tensor reference_bn(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims = {0, 2, 3}, cs = {1, x.size(1), 1, 1};
  Tensor m = x.mean(dims, true), v = var(x, dims, 0, true);
  return (x - m) * rsqrt(v + eps) * w.view(cs) + b.view(cs);
}
}  // namespace

TEST(BatchNormFused, Float32MatchesFloat64CompositeForwardAndBackward) {
  manual_seed(11);
  // A large offset: a one-pass sum of squares would lose the variance.
  Tensor x64 = randn({5, 3, 7, 9}, kFloat64) * 2 + 1000;
  Tensor w64 = randn({3}, kFloat64), b64 = randn({3}, kFloat64), g64 = randn({5, 3, 7, 9}, kFloat64);
  Tensor x = x64.to(kFloat32).requires_grad_(), w = w64.to(kFloat32).requires_grad_(),
         b = b64.to(kFloat32).requires_grad_();
  Tensor rm = zeros({3}), rv = ones({3});
  Tensor y = batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5);
  EXPECT_EQ(std::string(y.grad_fn()->name()), "NativeBatchNormBackward0");
  (y * g64.to(kFloat32)).sum().backward();

  Tensor xr = x.detach().to(kFloat64).requires_grad_(), wr = w64.clone().requires_grad_(),
         br = b64.clone().requires_grad_();
  Tensor yr = reference_bn(xr, wr, br, 1e-5);
  (yr * g64).sum().backward();
  EXPECT_TRUE(allclose(y.detach().to(kFloat64), yr.detach(), 1e-4, 1e-4));
  EXPECT_TRUE(allclose(x.grad().to(kFloat64), xr.grad(), 1e-3, 1e-4));
  EXPECT_TRUE(allclose(w.grad().to(kFloat64), wr.grad(), 1e-4, 1e-4));
  EXPECT_TRUE(allclose(b.grad().to(kFloat64), br.grad(), 1e-5, 1e-5));
  // Running stats: momentum 0.1 toward the batch mean and unbiased variance.
  Tensor xm = x.detach().to(kFloat64);
  Tensor mean = xm.mean({0, 2, 3}), uvar = var(xm, {0, 2, 3}, 1);
  EXPECT_TRUE(allclose(rm.to(kFloat64), mean * 0.1, 1e-5, 1e-3));
  EXPECT_TRUE(allclose(rv.to(kFloat64), uvar * 0.1 + 0.9, 1e-5, 1e-5));
}

TEST(BatchNormFused, Float64AgreesWithCompositeTightly) {
  manual_seed(12);
  Tensor x = randn({4, 2, 3, 5}, kFloat64).requires_grad_();
  Tensor w = randn({2}, kFloat64).requires_grad_(), b = randn({2}, kFloat64).requires_grad_();
  Tensor g = randn({4, 2, 3, 5}, kFloat64);
  Tensor y = batch_norm(x, Tensor(), Tensor(), w, b, true, 0.1, 1e-5);
  auto grads = autograd::grad({(y * g).sum()}, {x, w, b});
  Tensor yr = reference_bn(x, w, b, 1e-5);
  auto ref = autograd::grad({(yr * g).sum()}, {x, w, b});
  EXPECT_TRUE(allclose(y, yr, 1e-12, 1e-12));
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(allclose(grads[i], ref[i], 1e-10, 1e-12)) << i;
}

TEST(BatchNormFused, NoAffineNoInputGradAndGradgradcheck) {
  manual_seed(13);
  Tensor x = randn({2, 2, 3}, kFloat64).requires_grad_();
  autograd::gradcheck([](const variable_list& v) { return variable_list{batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true)}; },
                      {x});
  Tensor w = randn({2}, kFloat64).requires_grad_(), b = randn({2}, kFloat64).requires_grad_();
  autograd::gradgradcheck(
      [](const variable_list& v) { return variable_list{batch_norm(v[0], Tensor(), Tensor(), v[1], v[2], true)}; },
      {x, w, b});
  // Only the parameters need gradients (a first layer's input): dx is skipped.
  Tensor xd = randn({3, 2, 4}, kFloat64);
  Tensor y = batch_norm(xd, Tensor(), Tensor(), w, b, true);
  auto gw = autograd::grad({y.pow(2).sum()}, {w, b});
  Tensor yr = (xd - xd.mean({0, 2}, true)) * rsqrt(var(xd, {0, 2}, 0, true) + 1e-5) * w.view({1, 2, 1}) +
              b.view({1, 2, 1});
  auto gr = autograd::grad({yr.pow(2).sum()}, {w, b});
  EXPECT_TRUE(allclose(gw[0], gr[0], 1e-10, 1e-12));
  EXPECT_TRUE(allclose(gw[1], gr[1], 1e-10, 1e-12));
}

// Eval mode without gradients takes the fused scale/shift pass; with a
// gradient it stays on the differentiable composite. Both equal
// (x - running_mean) / sqrt(running_var + eps) * w + b, computed here in float64.
TEST(BatchNormFused, EvalModeUsesRunningStatistics) {
  manual_seed(12);
  Tensor x64 = randn({4, 3, 5, 6}, kFloat64) * 3 + 7;
  Tensor rm64 = randn({3}, kFloat64) + 7, rv64 = rand({3}, kFloat64) * 4 + 0.5;
  Tensor w64 = randn({3}, kFloat64), b64 = randn({3}, kFloat64);
  std::vector<int64_t> cs = {1, 3, 1, 1};
  Tensor expected = (x64 - rm64.view(cs)) / sqrt(rv64.view(cs) + 1e-5) * w64.view(cs) + b64.view(cs);

  Tensor x = x64.to(kFloat32), rm = rm64.to(kFloat32), rv = rv64.to(kFloat32), w = w64.to(kFloat32),
         b = b64.to(kFloat32);
  Tensor y = batch_norm(x, rm, rv, w, b, false, 0.1, 1e-5);
  EXPECT_TRUE(allclose(y.to(kFloat64), expected, 1e-5, 1e-5));
  Tensor y_noaffine = batch_norm(x, rm, rv, Tensor(), Tensor(), false, 0.1, 1e-5);
  Tensor expected_noaffine = (x64 - rm64.view(cs)) / sqrt(rv64.view(cs) + 1e-5);
  EXPECT_TRUE(allclose(y_noaffine.to(kFloat64), expected_noaffine, 1e-5, 1e-5));
  // Running statistics are not touched in eval mode.
  EXPECT_TRUE(allclose(rm.to(kFloat64), rm64, 1e-6, 1e-6));

  Tensor xg = x.clone().requires_grad_();
  Tensor yg = batch_norm(xg, rm, rv, w, b, false, 0.1, 1e-5);
  EXPECT_TRUE(allclose(yg.detach().to(kFloat64), expected, 1e-5, 1e-5));
  yg.sum().backward();
  // d/dx of an affine map per channel: w / sqrt(running_var + eps).
  Tensor dx = (w64 / sqrt(rv64 + 1e-5)).view(cs).expand({4, 3, 5, 6});
  EXPECT_TRUE(allclose(xg.grad().to(kFloat64), dx, 1e-5, 1e-5));
}

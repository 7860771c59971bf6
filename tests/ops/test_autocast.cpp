// Autocast (bf16 mixed precision): matmul-like ops see bf16-rounded float32
// operands and return float32; gradients reach float32 master weights.
#include <gtest/gtest.h>

#include "ember/core/autocast.h"
#include "ember/ember.h"

using namespace ember;

namespace {
Tensor rounded(const Tensor& t) { return t.to(kBFloat16).to(kFloat32); }
}  // namespace

TEST(Autocast, LinearAndMatmulUseBf16RoundedOperands) {
  manual_seed(1);
  Tensor x = randn({4, 8}), w = randn({3, 8}), b = randn({3});
  Tensor expected = linear(rounded(x), rounded(w), b);
  Tensor plain = linear(x, w, b);
  Tensor y;
  {
    AutocastGuard autocast;
    y = linear(x, w, b);
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(equal(matmul(x, w.t()), matmul(rounded(x), rounded(w).t())));
    EXPECT_TRUE(equal(mm(x, w.t()), mm(rounded(x), rounded(w).t())));
  }
  EXPECT_TRUE(equal(y, expected));
  EXPECT_FALSE(equal(y, plain));  // the rounding is real
  EXPECT_TRUE(allclose(y, plain, 2e-2, 2e-2));
  EXPECT_FALSE(Autocast::is_enabled());  // the guard restores
}

TEST(Autocast, ConvRoundsAndGradientsStayFloat32) {
  manual_seed(2);
  Tensor x = randn({2, 3, 6, 6});
  Tensor w = randn({4, 3, 3, 3}).requires_grad_(), b = randn({4}).requires_grad_();
  Tensor y;
  {
    AutocastGuard autocast;
    y = conv2d(x, w, b, {1}, {1});
  }
  EXPECT_TRUE(equal(y.detach(), conv2d(rounded(x), rounded(w.detach()), b.detach(), {1}, {1})));
  y.sum().backward();
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_EQ(b.grad().dtype(), kFloat32);
  // d sum / d w = sum over the input windows (of the rounded input).
  Tensor w2 = w.detach().clone().requires_grad_();
  conv2d(rounded(x), w2, b.detach(), {1}, {1}).sum().backward();
  EXPECT_TRUE(allclose(w.grad(), w2.grad(), 1e-2, 1e-2));
}

TEST(Autocast, Float64IsLeftAlone) {
  Tensor x = randn({2, 2}, kFloat64);
  AutocastGuard autocast;
  EXPECT_TRUE(equal(mm(x, x), [&] {
    AutocastGuard off(false);
    return mm(x, x);
  }()));
}

// Autocast (bf16 mixed precision), the emulated path: matmul-like ops see
// bf16-rounded float32 operands and return float32; gradients reach float32
// master weights. (The native path: test_autocast_native.cpp.)
#include <gtest/gtest.h>

#include "ember/core/autocast.h"
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/ember.h"
#include "ops/autocast_util.h"

using namespace ember;

namespace {
Tensor rounded(const Tensor& t) { return t.to(kBFloat16).to(kFloat32); }

// The emulated path for one test, whatever the CPU: its results are exact
// functions of the rounded operands, so the tests compare bit for bit.
class Emulated {
 public:
  Emulated() : prev_(Autocast::native_bf16_allowed()) { Autocast::set_native_bf16(false); }
  ~Emulated() { Autocast::set_native_bf16(prev_); }
  Emulated(const Emulated&) = delete;
  Emulated& operator=(const Emulated&) = delete;

 private:
  bool prev_;
};
}  // namespace

TEST(Autocast, LinearAndMatmulUseBf16RoundedOperands) {
  Emulated emulated;
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
  Emulated emulated;
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

// The one-pass rounding equals the two casts bit for bit (ties to even, NaN,
// infinities, subnormals), and its backward rounds the gradient the same way.
TEST(Autocast, Bf16RoundedEqualsTheTwoCasts) {
  manual_seed(3);
  Tensor x = cat({randn({1000}) * 1e3, rand({1000}) * 1e-38,
                  tensor<float>({0.0f, -0.0f, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.0f + 1.0f / 512,
                                 std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::max(), std::nanf("")},
                                {9})});
  Tensor expected = x.to(kBFloat16).to(kFloat32);
  Tensor got = bf16_rounded(x);
  ASSERT_EQ(got.dtype(), kFloat32);
  std::vector<float> a = got.to_vector<float>(), b = expected.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << i;
      continue;
    }
    uint32_t ua, ub;
    std::memcpy(&ua, &a[i], 4);
    std::memcpy(&ub, &b[i], 4);
    EXPECT_EQ(ua, ub) << "at " << i << ": " << x.to_vector<float>()[i];
  }
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(a[2000 + 2], 1.0f);
  Tensor xg = (randn({64}) * 10).requires_grad_();
  Tensor g = randn({64}) * 1e3;
  bf16_rounded(xg).backward(g);
  EXPECT_TRUE(equal(xg.grad(), g.to(kBFloat16).to(kFloat32)));
  EXPECT_EQ(std::string(bf16_rounded(xg).grad_fn()->name()), "ToCopyBackward0");
}

TEST(Autocast, Float64IsLeftAlone) {
  Tensor x = randn({2, 2}, kFloat64);
  AutocastGuard autocast;
  EXPECT_TRUE(equal(mm(x, x), [&] {
    AutocastGuard off(false);
    return mm(x, x);
  }()));
}

// Note [fast exp] (kernels/cpu/vec_f32.cpp): the in-range polynomial path
// and the fallback at the edges agree with double-precision exp to ~1 ulp.
TEST(ExpKernel, MatchesDoubleExpAcrossTheRangeAndEdges) {
  std::vector<float> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(static_cast<float>(i) * 0.0443f);  // -88.6 .. 88.6
  for (float v : {-87.0f, -86.999f, 88.0f, 87.999f, 88.01f, -87.01f, 0.0f, -0.0f, 1e-8f, -1e-8f, 0.34657f,
                  -0.34657f, 0.34658f, 88.7f, 88.8f, -103.0f, -104.0f, -200.0f, 200.0f})
    xs.push_back(v);
  const size_t n = xs.size();
  Tensor x = tensor<float>(xs, {static_cast<int64_t>(n)});
  Tensor y = exp(x);
  const float* p = y.data_ptr<float>();
  for (size_t i = 0; i < n; ++i) {
    double want = std::exp(static_cast<double>(xs[i]));
    if (want > 3.4028234663852886e38) {
      EXPECT_TRUE(std::isinf(p[i]) && p[i] > 0) << xs[i];
    } else if (want < 1.1754943508222875e-38) {
      EXPECT_NEAR(p[i], want, 1e-45 * 4) << xs[i];  // denormals: absolute
    } else {
      EXPECT_NEAR(p[i] / want, 1.0, 3e-7) << "exp(" << xs[i] << ") = " << p[i] << ", want " << want;
    }
  }
  // NaN and infinities, in a vector of otherwise in-range values.
  Tensor special = exp(tensor<float>({1.0f, NAN, INFINITY, -INFINITY, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {9}));
  EXPECT_TRUE(std::isnan(special[1].item<float>()));
  EXPECT_TRUE(std::isinf(special[2].item<float>()));
  EXPECT_EQ(special[3].item<float>(), 0.0f);
  EXPECT_NEAR(special[0].item<float>(), std::exp(1.0), 3e-7 * std::exp(1.0));
}

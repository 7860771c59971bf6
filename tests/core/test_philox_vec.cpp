// The SIMD Philox runs and the one-pass dropout against the scalar generator
// and the composite they replace (bitwise: they must draw the same numbers).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "kernels/cpu/philox_vec.h"
#include "ops/random_internal.h"

using namespace ember;

namespace {

uint64_t words(const std::array<uint32_t, 4>& r, int pair) {
  return static_cast<uint64_t>(r[2 * pair]) << 32 | r[2 * pair + 1];
}

void expect_scalar_blocks() {
  const uint64_t key = 0x0123456789abcdefull;
  // Starts below 2^32 so the runs cross the carry into the high word; the
  // odd lengths leave tails for the scalar loop.
  for (uint64_t counter0 : {uint64_t{0}, uint64_t{0xFFFFFFF0ull}, uint64_t{0xFFFFFFFFFFFFFFF8ull}}) {
    for (int64_t n : {1, 7, 8, 17, 64, 1001}) {
      std::vector<uint64_t> w01(static_cast<size_t>(n)), w23(static_cast<size_t>(n));
      vec::philox_bits(key, counter0, n, w01.data(), w23.data());
      for (int64_t i = 0; i < n; ++i) {
        auto r = philox4x32(key, counter0 + static_cast<uint64_t>(i));
        ASSERT_EQ(w01[i], words(r, 0)) << "counter0 " << counter0 << " i " << i;
        ASSERT_EQ(w23[i], words(r, 1)) << "counter0 " << counter0 << " i " << i;
      }
    }
  }
}

}  // namespace

TEST(PhiloxVec, EqualsTheScalarBlocksAcrossTheCounterCarryAndTails) {
  // On every target this CPU runs (AVX-512, AVX2, SSE4, the portable ones),
  // not only the one dispatch picks.
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    expect_scalar_blocks();
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(PhiloxVec, DropoutKeepsExactlyTheUniformsBelowTheThreshold) {
  const int64_t n = 999;
  std::vector<float> x(n), y(n), noise(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) - 500.0f;
  x[3] = std::numeric_limits<float>::infinity();
  const uint64_t key = 42, counter0 = 7, keep_below = uint64_t{1} << 52;  // q = 0.5
  vec::dropout_f32(key, counter0, keep_below, 2.0f, x.data(), y.data(), noise.data(), n);
  int kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double u = uint64_to_uniform_double(words(philox4x32(key, counter0 + i), 0));
    const float want = u < 0.5 ? 2.0f : 0.0f;
    ASSERT_EQ(noise[i], want) << i;
    if (i == 3 && want == 0.0f) {
      EXPECT_TRUE(std::isnan(y[i]));  // inf * 0, as x * noise gives
    } else {
      ASSERT_EQ(y[i], x[i] * want) << i;
    }
    kept += want != 0.0f;
  }
  EXPECT_GT(kept, 430);  // ~ Binomial(999, 0.5): mean 499.5, sd 15.8
  EXPECT_LT(kept, 570);
}

TEST(PhiloxVec, OnePassDropoutEqualsTheCompositeBitwise) {
  Tensor x = randn({37, 129});
  for (double p : {0.1, 0.5, 0.9, 1.0 / 3.0}) {
    Generator a(11), b(11);
    auto [y, noise] = detail::dropout_f32(x, p, &a);
    Tensor want_noise = bernoulli(zeros({37, 129}), 1 - p, &b);
    want_noise.div_(1 - p);
    EXPECT_TRUE(equal(noise, want_noise)) << p;
    EXPECT_TRUE(equal(y, x * want_noise)) << p;
    // The generator moved as far as the composite's draw moved it.
    EXPECT_TRUE(equal(rand({5}, {}, &a), rand({5}, {}, &b))) << p;
  }
}

TEST(PhiloxVec, DropoutGradientIsTheKeptScale) {
  Generator g(5);
  Tensor x = randn({64, 33}).requires_grad_(true);
  Tensor y = dropout(x, 0.25, true, &g);
  ASSERT_TRUE(y.grad_fn());
  y.sum().backward();
  // d(sum(x * noise))/dx = noise: 4/3 where kept, 0 elsewhere.
  Tensor kept = ne(y.detach(), 0);
  Tensor want = where(kept, full({64, 33}, 1.0f / 0.75f), zeros({64, 33}));
  EXPECT_TRUE(equal(x.grad(), want));
}

TEST(PhiloxVec, StridedDropoutDrawsInLogicalOrder) {
  Tensor x = randn({40, 70}).t();  // [70, 40], not contiguous
  Generator a(3), b(3);
  Tensor y = dropout(x, 0.3, true, &a);
  Tensor noise = bernoulli(zeros({70, 40}), 0.7, &b);
  noise.div_(0.7);
  EXPECT_TRUE(equal(y, x * noise));
  EXPECT_TRUE(equal(dropout(x, 0.3, true, &a), dropout(x.contiguous(), 0.3, true, &b)));
}

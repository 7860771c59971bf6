// Highway implementations behind vec_reduce.h; compiled once per target by
// foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/vec_reduce.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// clang-format off
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <algorithm>
#include <cfloat>
#include <cstring>

#include "kernels/cpu/vec_f32.h"
#include "kernels/cpu/vec_reduce.h"

HWY_BEFORE_NAMESPACE();
namespace ember::vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

float ExpSumF32(const float* x, float shift, float* out, int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V s = hn::Set(d, shift);
  // Highway's Exp is defined on [-FLT_MAX, 104]: map -inf (masked logits) to
  // -FLT_MAX, whose exp is 0. Lt is false for NaN, so NaN still propagates.
  const V lo = hn::Set(d, -FLT_MAX);
  auto shifted = [&](V v) {
    const V a = hn::Sub(v, s);
    return hn::IfThenElse(hn::Lt(a, lo), lo, a);
  };
  V acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const V e0 = hn::Exp(d, shifted(hn::LoadU(d, x + i)));
    const V e1 = hn::Exp(d, shifted(hn::LoadU(d, x + i + N)));
    hn::StoreU(e0, d, out + i);
    hn::StoreU(e1, d, out + i + N);
    acc0 = hn::Add(acc0, e0);
    acc1 = hn::Add(acc1, e1);
  }
  float total = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  if (i < n) {
    // Tail: only the first m lanes of the padded buffer are used.
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    for (; i < n;) {
      int64_t m = std::min<int64_t>(N, n - i);
      std::memcpy(buf, x + i, sizeof(float) * m);
      const V e = hn::Exp(d, shifted(hn::Load(d, buf)));
      hn::Store(e, d, buf);
      for (int64_t k = 0; k < m; ++k) total += buf[k];
      std::memcpy(out + i, buf, sizeof(float) * m);
      i += m;
    }
  }
  return total;
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::vec {
HWY_EXPORT(ExpSumF32);

float exp_sum_f32(const float* x, float shift, float* out, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(ExpSumF32)(x, shift, out, n);
}

double sum_f32_precise(const float* x, int64_t n) {
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t i = 0; i < n; i += kBlock) total += sum_f32(x + i, std::min(kBlock, n - i));
  return total;
}
}  // namespace ember::vec
#endif

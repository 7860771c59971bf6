// The activation quantization of the dynamic int8 kernels in Highway (this
// file is compiled once per target by foreach_target.h): q = clamp(round(x *
// inv) + zero_point, 0, qmax), rounding half to even, NaN to 0; and the
// symmetric int8 of the static kernels.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/quantize_u8.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>

#include "kernels/qgemm.h"

HWY_BEFORE_NAMESPACE();
namespace ember {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void QuantizeU8(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT q, int64_t n, float inv, float zp, float qmax) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> du8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vinv = hn::Set(d, inv), vzp = hn::Set(d, zp), vmax = hn::Set(d, qmax), vzero = hn::Zero(d);
  const auto lo = hn::Set(d, -1024.0f), hi = hn::Set(d, 1024.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto t = hn::Mul(hn::LoadU(d, x + i), vinv);
    // NaN -> 0 first (Min/Max pass NaN on some targets); the +-1024 clamp
    // keeps the rounding exact and is beyond every quantized range.
    t = hn::IfThenElse(hn::Eq(t, t), t, hn::Set(d, -1024.0f));
    t = hn::Min(hn::Max(t, lo), hi);
    auto r = hn::Add(hn::Round(t), vzp);  // Round: to nearest, ties to even
    r = hn::Min(hn::Max(r, vzero), vmax);
    hn::StoreU(hn::DemoteTo(du8, hn::ConvertTo(di, r)), du8, q + i);
  }
  for (; i < n; ++i) {
    float t = x[i] * inv;
    t = std::isnan(t) ? -1024.0f : std::fmin(std::fmax(t, -1024.0f), 1024.0f);
    const float r = std::fmin(std::fmax(std::nearbyint(t) + zp, 0.0f), qmax);
    q[i] = static_cast<uint8_t>(static_cast<int32_t>(r));
  }
}

// Symmetric int8: q = clamp(round(x * inv), -127, 127), NaN to 0.
void QuantizeS8(const float* HWY_RESTRICT x, int8_t* HWY_RESTRICT q, int64_t n, float inv) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> di8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vinv = hn::Set(d, inv), lo = hn::Set(d, -127.0f), hi = hn::Set(d, 127.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto t = hn::Mul(hn::LoadU(d, x + i), vinv);
    t = hn::IfThenElse(hn::Eq(t, t), t, hn::Zero(d));
    t = hn::Min(hn::Max(hn::Round(t), lo), hi);
    hn::StoreU(hn::DemoteTo(di8, hn::ConvertTo(di, t)), di8, q + i);
  }
  for (; i < n; ++i) {
    const float t = x[i] * inv;
    q[i] = static_cast<int8_t>(std::isnan(t) ? 0.0f : std::fmin(std::fmax(std::nearbyint(t), -127.0f), 127.0f));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ember
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember {
HWY_EXPORT(QuantizeU8);
void quantize_u8(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero_point, float qmax) {
  HWY_DYNAMIC_DISPATCH(QuantizeU8)(x, q, n, inv_scale, zero_point, qmax);
}
HWY_EXPORT(QuantizeS8);
void quantize_s8(const float* x, int8_t* q, int64_t n, float inv_scale) {
  HWY_DYNAMIC_DISPATCH(QuantizeS8)(x, q, n, inv_scale);
}
}  // namespace ember
#endif

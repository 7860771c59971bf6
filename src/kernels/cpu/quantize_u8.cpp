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
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint8_t, decltype(d)> du8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Each result is an integer in [0, qmax], computed as m + q with m = 2^23:
  // that float's low mantissa bits are q, so its lowest byte is the uint8
  // (fewer operations than converting and saturating, the hot loop of
  // dynamic int8 layers). Clamping after the rounding gives what clamping
  // t to +-1024 first gave: the bounds are integers.
  constexpr float kMagic = 8388608.0f;
  const auto vinv = hn::Set(d, inv), vzp = hn::Set(d, zp + kMagic), vlo = hn::Set(d, kMagic),
             vhi = hn::Set(d, kMagic + qmax), vnan = hn::Set(d, -1024.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto t = hn::Mul(hn::LoadU(d, x + i), vinv);
    t = hn::IfThenElse(hn::Eq(t, t), t, vnan);           // NaN -> 0 after the clamp
    auto r = hn::Add(hn::Round(t), vzp);                 // Round: to nearest, ties to even
    r = hn::Min(hn::Max(r, vlo), vhi);
    hn::StoreU(hn::U8FromU32(hn::BitCast(du, r)), du8, q + i);
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

// y[j] = float(int32(acc[j] - offset[j])) * scale[j] (+ bias[j]), the
// subtraction wrapping, then max(0, y) with relu (the relu kernel's op).
// One fused multiply-add per lane on every target (the tail goes through a
// padded vector), so a row's numbers do not depend on where it falls in the
// vector loop.
void DequantizeRow(const int32_t* HWY_RESTRICT acc, const uint32_t* HWY_RESTRICT offset,
                   const float* HWY_RESTRICT scale, const float* HWY_RESTRICT bias, float* HWY_RESTRICT y, int64_t n,
                   bool relu) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::RebindToUnsigned<decltype(d)> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // One vector of results from its loaded operands (b unused without a bias).
  auto finish = [&](auto a, auto o, auto s, auto b) {
    const auto centred = hn::ConvertTo(d, hn::BitCast(di, hn::Sub(hn::BitCast(du, a), o)));
    const auto v = bias ? hn::MulAdd(centred, s, b) : hn::Mul(centred, s);
    return relu ? hn::Max(hn::Zero(d), v) : v;
  };
  auto lane = [&](const int32_t* a, const uint32_t* o, const float* s, const float* b) {
    return finish(hn::LoadU(di, a), hn::LoadU(du, o), hn::LoadU(d, s), b ? hn::LoadU(d, b) : hn::Zero(d));
  };
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  int64_t j = 0;
  for (; j + N <= n; j += N) hn::StoreU(lane(acc + j, offset + j, scale + j, bias ? bias + j : nullptr), d, y + j);
  if (j == n) return;
#if !HWY_MEM_OPS_MIGHT_FAULT
  // The tail in masked lanes (a 256 -> 10 layer is all tail): the same
  // operations on the lanes that exist, and no faults past the row's end.
  {
    const auto m = hn::FirstN(d, static_cast<size_t>(n - j));
    hn::BlendedStore(finish(hn::MaskedLoad(hn::RebindMask(di, m), di, acc + j),
                            hn::MaskedLoad(hn::RebindMask(du, m), du, offset + j), hn::MaskedLoad(m, d, scale + j),
                            bias ? hn::MaskedLoad(m, d, bias + j) : hn::Zero(d)),
                     m, d, y + j);
    return;
  }
#endif
  HWY_ALIGN int32_t ta[kMaxLanes] = {};
  HWY_ALIGN uint32_t to[kMaxLanes] = {};
  HWY_ALIGN float ts[kMaxLanes] = {}, tb[kMaxLanes] = {}, ty[kMaxLanes];
  const int64_t rest = n - j;
  for (int64_t t = 0; t < rest; ++t) {
    ta[t] = acc[j + t], to[t] = offset[j + t], ts[t] = scale[j + t];
    if (bias) tb[t] = bias[j + t];
  }
  hn::Store(lane(ta, to, ts, bias ? tb : nullptr), d, ty);
  for (int64_t t = 0; t < rest; ++t) y[j + t] = ty[t];
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
HWY_EXPORT(DequantizeRow);
void dequantize_row(const int32_t* acc, const uint32_t* offset, const float* scale, const float* bias, float* y,
                    int64_t n, bool relu) {
  HWY_DYNAMIC_DISPATCH(DequantizeRow)(acc, offset, scale, bias, y, n, relu);
}
HWY_EXPORT(QuantizeS8);
void quantize_s8(const float* x, int8_t* q, int64_t n, float inv_scale) {
  HWY_DYNAMIC_DISPATCH(QuantizeS8)(x, q, n, inv_scale);
}
}  // namespace ember
#endif

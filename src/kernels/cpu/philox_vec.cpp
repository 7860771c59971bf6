// Highway implementations behind philox_vec.h; this file is compiled once per
// target by foreach_target.h.
//
// Each 64-bit lane carries one counter. Philox's 32x32->64 products are
// MulEven on the lanes' low halves, so the words may keep garbage in their
// high halves between rounds (the XORs only move it upwards, MulEven never
// reads it); it is masked off once, at the end.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/philox_vec.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>

#include "ember/core/generator.h"
#include "kernels/cpu/philox_vec.h"

HWY_BEFORE_NAMESPACE();
namespace ember::vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D64 = hn::ScalableTag<uint64_t>;
using V64 = hn::Vec<D64>;

// Highway's scalar target cannot split a 64-bit lane into 32-bit halves; it
// takes the scalar loops (the tails below) for every element.
#if HWY_TARGET != HWY_SCALAR
struct Block {
  V64 c0, c1, c2, c3;  // each word in its lane's low 32 bits
};

// Philox4x32-10 of the counters in `ctr`, as ember::philox4x32.
HWY_INLINE Block PhiloxRounds(V64 ctr, uint64_t key) {
  const D64 d;
  const hn::Repartition<uint32_t, D64> d32;
  const auto m0 = hn::BitCast(d32, hn::Set(d, 0xD2511F53u));
  const auto m1 = hn::BitCast(d32, hn::Set(d, 0xCD9E8D57u));
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  V64 c0 = ctr, c1 = hn::ShiftRight<32>(ctr), c2 = hn::Zero(d), c3 = hn::Zero(d);
  for (int round = 0; round < 10; ++round) {
    const V64 p0 = hn::MulEven(hn::BitCast(d32, c0), m0);
    const V64 p1 = hn::MulEven(hn::BitCast(d32, c2), m1);
    c0 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p1), c1), hn::Set(d, k0));
    c2 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p0), c3), hn::Set(d, k1));
    c1 = p1;
    c3 = p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  const V64 low = hn::Set(d, 0xFFFFFFFFull);
  return {hn::And(c0, low), hn::And(c1, low), hn::And(c2, low), hn::And(c3, low)};
}

HWY_INLINE V64 Counters(uint64_t first) {
  const D64 d;
  return hn::Add(hn::Set(d, first), hn::Iota(d, 0));
}
#endif

void PhiloxBits(uint64_t key, uint64_t counter0, int64_t n, uint64_t* HWY_RESTRICT words01,
                uint64_t* HWY_RESTRICT words23) {
  int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const D64 d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (; i + N <= n; i += N) {
    const Block b = PhiloxRounds(Counters(counter0 + static_cast<uint64_t>(i)), key);
    hn::StoreU(hn::Or(hn::ShiftLeft<32>(b.c0), b.c1), d, words01 + i);
    if (words23) hn::StoreU(hn::Or(hn::ShiftLeft<32>(b.c2), b.c3), d, words23 + i);
  }
#endif
  for (; i < n; ++i) {
    const auto r = philox4x32(key, counter0 + static_cast<uint64_t>(i));
    words01[i] = static_cast<uint64_t>(r[0]) << 32 | r[1];
    if (words23) words23[i] = static_cast<uint64_t>(r[2]) << 32 | r[3];
  }
}

void DropoutF32(uint64_t key, uint64_t counter0, uint64_t keep_below, float scale, const float* HWY_RESTRICT x,
                float* HWY_RESTRICT y, float* HWY_RESTRICT noise, int64_t n) {
  int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const D64 d;
  const hn::Rebind<uint32_t, D64> du32;  // as many lanes as d, half as wide
  const hn::Rebind<float, D64> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, sizeof scale_bits);
  const V64 vscale = hn::Set(d, scale_bits), vkeep = hn::Set(d, keep_below);
  for (; i + N <= n; i += N) {
    const Block b = PhiloxRounds(Counters(counter0 + static_cast<uint64_t>(i)), key);
    const V64 bits53 = hn::ShiftRight<11>(hn::Or(hn::ShiftLeft<32>(b.c0), b.c1));
    const V64 kept = hn::IfThenElseZero(hn::Lt(bits53, vkeep), vscale);
    const auto nz = hn::BitCast(df, hn::TruncateTo(du32, kept));
    hn::StoreU(nz, df, noise + i);
    // x * 0 rather than 0, so a dropped inf or NaN gives NaN, as x * noise did.
    hn::StoreU(hn::Mul(hn::LoadU(df, x + i), nz), df, y + i);
  }
#endif
  for (; i < n; ++i) {
    const auto r = philox4x32(key, counter0 + static_cast<uint64_t>(i));
    const uint64_t bits53 = (static_cast<uint64_t>(r[0]) << 32 | r[1]) >> 11;
    noise[i] = bits53 < keep_below ? scale : 0.0f;
    y[i] = x[i] * noise[i];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::vec {
HWY_EXPORT(PhiloxBits);
HWY_EXPORT(DropoutF32);

void philox_bits(uint64_t key, uint64_t counter0, int64_t n, uint64_t* words01, uint64_t* words23) {
  HWY_DYNAMIC_DISPATCH(PhiloxBits)(key, counter0, n, words01, words23);
}
void dropout_f32(uint64_t key, uint64_t counter0, uint64_t keep_below, float scale, const float* x, float* y,
                 float* noise, int64_t n) {
  HWY_DYNAMIC_DISPATCH(DropoutF32)(key, counter0, keep_below, scale, x, y, noise, n);
}
}  // namespace ember::vec
#endif

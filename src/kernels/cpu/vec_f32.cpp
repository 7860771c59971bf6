// Highway implementations behind vec_f32.h; this file is compiled once per
// target by foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/vec_f32.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// clang-format off
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/vec_f32.h"

HWY_BEFORE_NAMESPACE();
namespace ember::vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Applies f to full vectors, then to a zero-padded copy of the tail.
template <class F>
HWY_INLINE void map1(const float* HWY_RESTRICT x, float* HWY_RESTRICT out, int64_t n, const F& f) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(d, hn::LoadU(d, x + i)), d, out + i);
  if (i < n) {
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    std::memcpy(buf, x + i, sizeof(float) * (n - i));
    hn::Store(f(d, hn::Load(d, buf)), d, buf);
    std::memcpy(out + i, buf, sizeof(float) * (n - i));
  }
}

template <class F>
HWY_INLINE void map2(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                     float* HWY_RESTRICT out, int64_t n, int mode, const F& f) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V sa = hn::Set(d, mode == 2 ? a[0] : 0.0f);
  const V sb = hn::Set(d, mode == 1 ? b[0] : 0.0f);
  auto load_a = [&](int64_t i) { return mode == 2 ? sa : hn::LoadU(d, a + i); };
  auto load_b = [&](int64_t i) { return mode == 1 ? sb : hn::LoadU(d, b + i); };
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(load_a(i), load_b(i)), d, out + i);
  if (i < n) {
    HWY_ALIGN float ba[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float bb[HWY_MAX_BYTES / sizeof(float)] = {};
    for (int64_t k = 0; k < n - i; ++k) {
      ba[k] = mode == 2 ? a[0] : a[i + k];
      bb[k] = mode == 1 ? b[0] : b[i + k];
    }
    hn::Store(f(hn::Load(d, ba), hn::Load(d, bb)), d, ba);
    std::memcpy(out + i, ba, sizeof(float) * (n - i));
  }
}

void BinaryF32(int op, const float* a, const float* b, float* out, int64_t n, int mode) {
  switch (static_cast<Binary>(op)) {
    case Binary::Add: return map2(a, b, out, n, mode, [](V x, V y) { return hn::Add(x, y); });
    case Binary::Sub: return map2(a, b, out, n, mode, [](V x, V y) { return hn::Sub(x, y); });
    case Binary::Mul: return map2(a, b, out, n, mode, [](V x, V y) { return hn::Mul(x, y); });
    case Binary::Div: return map2(a, b, out, n, mode, [](V x, V y) { return hn::Div(x, y); });
  }
}

// Highway's transcendental functions assume finite input; NaN must pass
// through unchanged as in PyTorch.
HWY_INLINE V keep_nan(V x, V r) { return hn::IfThenElse(hn::IsNaN(x), x, r); }

// Sin/Cos are accurate only for moderate |x|: vectors holding a large or
// non-finite lane go through libm instead.
template <class VecF, class ScalarF>
HWY_INLINE void map1_trig(const float* HWY_RESTRICT x, float* HWY_RESTRICT out, int64_t n,
                          const VecF& vf, const ScalarF& sf) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V limit = hn::Set(d, 8192.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    V v = hn::LoadU(d, x + i);
    if (hn::AllTrue(d, hn::Lt(hn::Abs(v), limit))) {
      hn::StoreU(vf(d, v), d, out + i);
    } else {
      for (int64_t k = 0; k < N; ++k) out[i + k] = sf(x[i + k]);
    }
  }
  for (; i < n; ++i) out[i] = sf(x[i]);
}

// Note [fast exp]: exp(x) = 2^k * e^r with k = round(x / ln 2) and
// r = x - k ln 2 (Cody-Waite: ln 2 split so k * ln2_hi is exact), e^r from
// its degree-7 Taylor polynomial on |r| <= ln(2)/2 (truncation < 1e-8
// relative), 2^k by writing the exponent bits. About half the work of
// Highway's Exp, which also handles k outside [-126, 127]: vectors with a
// lane outside [-87, 88] (or NaN) take that path instead. At 2 threads the
// cheaper form keeps exp near memory bandwidth.
HWY_INLINE V exp_in_range(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V k = hn::Round(hn::Mul(x, hn::Set(d, 1.44269504088896341f)));
  V r = hn::NegMulAdd(k, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(k, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.0f / 5040);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 720));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  const auto bits = hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, k), hn::Set(di, 127)));
  return hn::Mul(p, hn::BitCast(d, bits));
}

HWY_INLINE V fast_exp(D d, V x) {
  const auto ok = hn::And(hn::Ge(x, hn::Set(d, -87.0f)), hn::Le(x, hn::Set(d, 88.0f)));
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return exp_in_range(d, x);
  // Highway's Exp assumes |x| in its domain: saturate to +inf and 0 beyond
  // float's range (exp(88.7228) is FLT_MAX; exp(-103.973) rounds to 0).
  V r = hn::Exp(d, x);
  r = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72284f)), hn::Inf(d), r);
  r = hn::IfThenElse(hn::Lt(x, hn::Set(d, -103.972f)), hn::Zero(d), r);
  return keep_nan(x, r);
}

HWY_INLINE V sigmoid(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, hn::Add(one, hn::Exp(d, hn::Neg(x))));
}

// erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): the formula of
// PyTorch's vectorized CPU erf, which its GELU runs on.
HWY_INLINE V erf_as(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V ax = hn::Abs(x);
  const V t = hn::Div(one, hn::MulAdd(hn::Set(d, 0.3275911f), ax, one));
  V p = hn::MulAdd(hn::Set(d, 1.061405429f), t, hn::Set(d, -1.453152027f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.421413741f));
  p = hn::MulAdd(p, t, hn::Set(d, -0.284496736f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.254829592f));
  p = hn::Mul(p, t);
  return hn::CopySign(hn::NegMulAdd(p, fast_exp(d, hn::Neg(hn::Mul(ax, ax))), one), x);
}

HWY_INLINE V gelu_cdf(D d, V v) {  // 0.5 * (1 + erf(v / sqrt(2)))
  const V half = hn::Set(d, 0.5f);
  return hn::MulAdd(half, erf_as(d, hn::Mul(v, hn::Set(d, 0.7071067811865476f))), half);
}

void UnaryF32(int op, const float* x, float* out, int64_t n) {
  switch (static_cast<Unary>(op)) {
    case Unary::Exp: return map1(x, out, n, [](D d, V v) { return fast_exp(d, v); });
    case Unary::Expm1: return map1(x, out, n, [](D d, V v) { return keep_nan(v, hn::Expm1(d, v)); });
    case Unary::Log: return map1(x, out, n, [](D d, V v) {
        // Highway's Log is undefined for v <= 0; give PyTorch's -inf / nan.
        const V r = hn::Log(d, v);
        const V zero = hn::Zero(d);
        const V neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
        const V nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
        const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
        V res = hn::IfThenElse(hn::Eq(v, zero), neg_inf, r);
        res = hn::IfThenElse(hn::Lt(v, zero), nan, res);
        res = hn::IfThenElse(hn::Eq(v, inf), inf, res);
        return hn::IfThenElse(hn::IsNaN(v), v, res);
      });
    case Unary::Log1p: return map1(x, out, n, [](D d, V v) {
        const V r = hn::Log1p(d, v);
        const V m1 = hn::Set(d, -1.0f);
        const V neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
        const V nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
        const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
        V res = hn::IfThenElse(hn::Eq(v, m1), neg_inf, r);
        res = hn::IfThenElse(hn::Lt(v, m1), nan, res);
        res = hn::IfThenElse(hn::Eq(v, inf), inf, res);
        return hn::IfThenElse(hn::IsNaN(v), v, res);
      });
    case Unary::Tanh: return map1(x, out, n, [](D d, V v) { return keep_nan(v, hn::Tanh(d, v)); });
    case Unary::Sigmoid: return map1(x, out, n, [](D d, V v) { return keep_nan(v, sigmoid(d, v)); });
    case Unary::Sqrt: return map1(x, out, n, [](D, V v) { return hn::Sqrt(v); });
    case Unary::Rsqrt: return map1(x, out, n, [](D d, V v) { return hn::Div(hn::Set(d, 1.0f), hn::Sqrt(v)); });
    // Max(0, v) returns v when v is NaN, so NaN propagates as in PyTorch.
    case Unary::Relu: return map1(x, out, n, [](D d, V v) { return hn::Max(hn::Zero(d), v); });
    case Unary::Neg: return map1(x, out, n, [](D, V v) { return hn::Neg(v); });
    case Unary::Abs: return map1(x, out, n, [](D, V v) { return hn::Abs(v); });
    case Unary::Sin:
      return map1_trig(x, out, n, [](D d, V v) { return hn::Sin(d, v); }, [](float v) { return std::sin(v); });
    case Unary::Cos:
      return map1_trig(x, out, n, [](D d, V v) { return hn::Cos(d, v); }, [](float v) { return std::cos(v); });
    case Unary::Silu: return map1(x, out, n, [](D d, V v) { return keep_nan(v, hn::Mul(v, sigmoid(d, v))); });
    case Unary::GeluTanh: return map1(x, out, n, [](D d, V v) {
        const V k = hn::Set(d, 0.7978845608028654f);  // sqrt(2 / pi)
        const V c = hn::Set(d, 0.044715f);
        const V inner = hn::Mul(k, hn::MulAdd(hn::Mul(c, v), hn::Mul(v, v), v));
        const V half = hn::Set(d, 0.5f);
        return keep_nan(v, hn::Mul(hn::Mul(half, v), hn::Add(hn::Set(d, 1.0f), hn::Tanh(d, inner))));
      });
    case Unary::Gelu: return map1(x, out, n, [](D d, V v) { return keep_nan(v, hn::Mul(v, gelu_cdf(d, v))); });
    case Unary::Reciprocal: return map1(x, out, n, [](D d, V v) { return hn::Div(hn::Set(d, 1.0f), v); });
    case Unary::Floor: return map1(x, out, n, [](D, V v) { return hn::Floor(v); });
    case Unary::Ceil: return map1(x, out, n, [](D, V v) { return hn::Ceil(v); });
    case Unary::Round: return map1(x, out, n, [](D, V v) { return hn::Round(v); });
    case Unary::Trunc: return map1(x, out, n, [](D, V v) { return hn::Trunc(v); });
  }
}

void GeluBackwardF32(const float* g, const float* x, float* out, int64_t n, bool tanh_approx) {
  if (tanh_approx) {
    return map2(g, x, out, n, 0, [](V gv, V v) {
      const D d;
      const V k = hn::Set(d, 0.7978845608028654f), c = hn::Set(d, 0.044715f), half = hn::Set(d, 0.5f);
      const V one = hn::Set(d, 1.0f), v2 = hn::Mul(v, v);
      const V t = hn::Tanh(d, hn::Mul(k, hn::MulAdd(hn::Mul(c, v), v2, v)));
      // 0.5 * (1 + t) + 0.5 * v * (1 - t^2) * k * (1 + 3 c v^2)
      const V dinner = hn::Mul(k, hn::MulAdd(hn::Mul(hn::Set(d, 3.0f), c), v2, one));
      const V r = hn::MulAdd(hn::Mul(hn::Mul(half, v), hn::NegMulAdd(t, t, one)), dinner, hn::MulAdd(half, t, half));
      return hn::Mul(gv, keep_nan(v, r));
    });
  }
  return map2(g, x, out, n, 0, [](V gv, V v) {
    const D d;
    // cdf + v * pdf, pdf = exp(-v^2 / 2) / sqrt(2 pi)
    const V pdf = hn::Mul(fast_exp(d, hn::Mul(hn::Set(d, -0.5f), hn::Mul(v, v))), hn::Set(d, 0.3989422804014327f));
    return hn::Mul(gv, keep_nan(v, hn::MulAdd(v, pdf, gelu_cdf(d, v))));
  });
}

float SumF32(const float* x, int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Four accumulators hide the add latency and reduce rounding error growth.
  V s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + N));
    s2 = hn::Add(s2, hn::LoadU(d, x + i + 2 * N));
    s3 = hn::Add(s3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  float total = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < n; ++i) total += x[i];
  return total;
}

template <bool kMax>
float ExtremeF32(const float* x, int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  float init = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  V m = hn::Set(d, init);
  auto nan_seen = hn::Eq(m, m);  // all false after Not
  nan_seen = hn::Not(nan_seen);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    V v = hn::LoadU(d, x + i);
    nan_seen = hn::Or(nan_seen, hn::IsNaN(v));
    m = kMax ? hn::Max(m, v) : hn::Min(m, v);
  }
  float r = hn::GetLane(kMax ? hn::MaxOfLanes(d, m) : hn::MinOfLanes(d, m));
  bool nan = !hn::AllFalse(d, nan_seen);
  for (; i < n; ++i) {
    if (std::isnan(x[i])) nan = true;
    r = kMax ? std::max(r, x[i]) : std::min(r, x[i]);
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : r;
}
float MaxF32(const float* x, int64_t n) { return ExtremeF32<true>(x, n); }
float MinF32(const float* x, int64_t n) { return ExtremeF32<false>(x, n); }

// Both extremes in one pass over x (the dynamic int8 layers' range).
void MinMaxF32(const float* x, int64_t n, float* lo, float* hi) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  V mn = hn::Set(d, std::numeric_limits<float>::infinity()), mx = hn::Neg(mn);
  auto nan_seen = hn::Ne(mn, mn);  // all false
  int64_t i = 0;
  // Four chains: one is bound by min/max latency (4 cycles a vector), and
  // dynamic int8 layers take the range of every activation.
  {
    V mn1 = mn, mn2 = mn, mn3 = mn, mx1 = mx, mx2 = mx, mx3 = mx;
    auto nan1 = nan_seen;
    for (; i + 4 * N <= n; i += 4 * N) {
      const V v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + N), v2 = hn::LoadU(d, x + i + 2 * N),
              v3 = hn::LoadU(d, x + i + 3 * N);
      nan_seen = hn::Or(nan_seen, hn::Or(hn::IsNaN(v0), hn::IsNaN(v1)));
      nan1 = hn::Or(nan1, hn::Or(hn::IsNaN(v2), hn::IsNaN(v3)));
      mn = hn::Min(mn, v0), mn1 = hn::Min(mn1, v1), mn2 = hn::Min(mn2, v2), mn3 = hn::Min(mn3, v3);
      mx = hn::Max(mx, v0), mx1 = hn::Max(mx1, v1), mx2 = hn::Max(mx2, v2), mx3 = hn::Max(mx3, v3);
    }
    nan_seen = hn::Or(nan_seen, nan1);
    mn = hn::Min(hn::Min(mn, mn1), hn::Min(mn2, mn3));
    mx = hn::Max(hn::Max(mx, mx1), hn::Max(mx2, mx3));
  }
  for (; i + N <= n; i += N) {
    V v = hn::LoadU(d, x + i);
    nan_seen = hn::Or(nan_seen, hn::IsNaN(v));
    mn = hn::Min(mn, v);
    mx = hn::Max(mx, v);
  }
  float l = hn::GetLane(hn::MinOfLanes(d, mn)), h = hn::GetLane(hn::MaxOfLanes(d, mx));
  bool nan = !hn::AllFalse(d, nan_seen);
  for (; i < n; ++i) {
    if (std::isnan(x[i])) nan = true;
    l = std::min(l, x[i]);
    h = std::max(h, x[i]);
  }
  *lo = nan ? std::numeric_limits<float>::quiet_NaN() : l;
  *hi = nan ? std::numeric_limits<float>::quiet_NaN() : h;
}

void AccumulateF32(float* out, const float* x, int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Add(hn::LoadU(d, out + i), hn::LoadU(d, x + i)), d, out + i);
  for (; i < n; ++i) out[i] += x[i];
}

// A product the compiler may not fuse into the next add (GCC contracts
// vector mul + add into FMA): the separate ops round every product, and the
// fused cell below must give their numbers.
HWY_INLINE V rounded(V v) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
  asm("" : "+v"(v.raw));
#endif
  return v;
}

// One LSTM step's gates in one pass (PyTorch's i, f, g, o order), the same
// operations as the separate ops it replaces for inference: a = gx + gh per
// gate, c' = sigmoid(a_f) * c + sigmoid(a_i) * tanh(a_g), h' = sigmoid(a_o) *
// tanh(c'). The tail of each row goes through padded vectors.
void LstmCellF32(const float* HWY_RESTRICT gx, const float* HWY_RESTRICT gh, const float* HWY_RESTRICT c,
                 float* HWY_RESTRICT h_out, float* HWY_RESTRICT c_out, int64_t batch, int64_t hidden) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(float);
  auto sig = [&](V a) { return keep_nan(a, sigmoid(d, a)); };
  auto tanh_v = [&](V a) { return keep_nan(a, hn::Tanh(d, a)); };
  // Gate q's pre-activation at column j of row r: count lanes (N or fewer).
  auto load = [&](const float* p, int64_t count, float* buf) {
    if (count == N) return hn::LoadU(d, p);
    std::memset(buf, 0, sizeof(float) * kMax);
    std::memcpy(buf, p, sizeof(float) * static_cast<size_t>(count));
    return hn::Load(d, buf);
  };
  HWY_ALIGN float buf[10][kMax];
  for (int64_t r = 0; r < batch; ++r) {
    const float* x = gx + r * 4 * hidden;
    const float* hrow = gh + r * 4 * hidden;
    for (int64_t j = 0; j < hidden; j += N) {
      const int64_t count = std::min(N, hidden - j);
      auto gate = [&](int q, int slot) {
        return hn::Add(load(x + q * hidden + j, count, buf[slot]), load(hrow + q * hidden + j, count, buf[slot + 1]));
      };
      const V i = sig(gate(0, 0)), f = sig(gate(1, 2)), g = tanh_v(gate(2, 4)), o = sig(gate(3, 6));
      const V cn = hn::Add(rounded(hn::Mul(f, load(c + r * hidden + j, count, buf[8]))), rounded(hn::Mul(i, g)));
      const V hv = hn::Mul(o, tanh_v(cn));
      if (count == N) {
        hn::StoreU(cn, d, c_out + r * hidden + j);
        hn::StoreU(hv, d, h_out + r * hidden + j);
      } else {
        hn::Store(cn, d, buf[8]);
        hn::Store(hv, d, buf[9]);
        std::memcpy(c_out + r * hidden + j, buf[8], sizeof(float) * static_cast<size_t>(count));
        std::memcpy(h_out + r * hidden + j, buf[9], sizeof(float) * static_cast<size_t>(count));
      }
    }
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace ember::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::vec {
HWY_EXPORT(BinaryF32);
HWY_EXPORT(UnaryF32);
HWY_EXPORT(SumF32);
HWY_EXPORT(MaxF32);
HWY_EXPORT(MinF32);
HWY_EXPORT(MinMaxF32);
HWY_EXPORT(AccumulateF32);
HWY_EXPORT(TargetName);
HWY_EXPORT(LstmCellF32);
HWY_EXPORT(GeluBackwardF32);

void binary_f32(Binary op, const float* a, const float* b, float* out, int64_t n, int mode) {
  HWY_DYNAMIC_DISPATCH(BinaryF32)(static_cast<int>(op), a, b, out, n, mode);
}
void unary_f32(Unary op, const float* x, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryF32)(static_cast<int>(op), x, out, n);
}
float sum_f32(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumF32)(x, n); }
float max_f32(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(MaxF32)(x, n); }
float min_f32(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(MinF32)(x, n); }
void minmax_f32(const float* x, int64_t n, float* lo, float* hi) { HWY_DYNAMIC_DISPATCH(MinMaxF32)(x, n, lo, hi); }
void lstm_cell_f32(const float* gx, const float* gh, const float* c, float* h_out, float* c_out, int64_t batch,
                   int64_t hidden) {
  HWY_DYNAMIC_DISPATCH(LstmCellF32)(gx, gh, c, h_out, c_out, batch, hidden);
}
void accumulate_f32(float* out, const float* x, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AccumulateF32)(out, x, n);
}
void gelu_backward_f32(const float* g, const float* x, float* out, int64_t n, bool tanh_approx) {
  HWY_DYNAMIC_DISPATCH(GeluBackwardF32)(g, x, out, n, tanh_approx);
}
const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
}  // namespace ember::vec
#endif

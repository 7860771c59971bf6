// Max pooling over non-overlapping windows (float32, kernel == stride, no
// padding, dilation 1; Note [non-overlapping max pool]), vectorized with
// Highway; this file is compiled once per target by foreach_target.h. Every
// other max pool runs pool_ref.cpp's loops, the oracle of this one.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pool_vec.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/nn.h"

// Note [non-overlapping max pool]: with kernel == stride each input element
// lies in at most one window. An output row reads its kh input rows as kw
// interleaved streams (LoadInterleavedK splits a row into the kw columns of
// consecutive windows) and folds the kh * kw candidates in row-major order
// with pool_ref.cpp's rule, x > best || x is NaN: the first maximum wins ties
// and the last NaN wins. Backward writes every window densely (the gradient
// where its index points, zero elsewhere), so grad_in needs no memset and no
// scatter; an index outside its window, which no forward produces, would
// lose its gradient. A row shorter than a vector runs a narrower one (8, 4,
// then 1 lane), and a row's last span may overlap the one before it (it
// recomputes the same outputs). Indices are int64 but a plane's flat index
// fits int32 (checked in max_pool2d_vec_applies): they are written and read
// as (low, high) int32 pairs, which needs a little-endian machine.

HWY_BEFORE_NAMESPACE();
namespace ember::pool_vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Column dx of c holds element dx of kw-wide windows starting at x.
template <int KW, class D, class V>
HWY_INLINE void load_columns(D d, const float* HWY_RESTRICT x, V (&c)[KW]) {
  if constexpr (KW == 2) {
    hn::LoadInterleaved2(d, x, c[0], c[1]);
  } else if constexpr (KW == 3) {
    hn::LoadInterleaved3(d, x, c[0], c[1], c[2]);
  } else {
    hn::LoadInterleaved4(d, x, c[0], c[1], c[2], c[3]);
  }
}

template <int KW, class D, class V>
HWY_INLINE void store_columns(D d, const V (&c)[KW], float* HWY_RESTRICT x) {
  if constexpr (KW == 2) {
    hn::StoreInterleaved2(c[0], c[1], d, x);
  } else if constexpr (KW == 3) {
    hn::StoreInterleaved3(c[0], c[1], c[2], d, x);
  } else {
    hn::StoreInterleaved4(c[0], c[1], c[2], c[3], d, x);
  }
}

// Flat index of the top-left corner of windows j .. j + Lanes(di) - 1 of
// the output row whose first input row is h0.
template <int KW, class DI>
HWY_INLINE hn::Vec<DI> corners(DI di, int64_t h0, int64_t iw, int64_t j) {
  const auto lane = hn::Iota(di, 0);
  auto step = lane;
  for (int k = 1; k < KW; ++k) step = hn::Add(step, lane);
  return hn::Add(hn::Set(di, static_cast<int32_t>(h0 * iw + j * KW)), step);
}

// Outputs j .. j + Lanes(d) - 1 of output row oh: out and idx point at the
// row, x at the plane.
template <int KW, class D>
HWY_INLINE void forward_span(D d, const float* HWY_RESTRICT x, int64_t iw, int64_t kh, int64_t oh, int64_t j,
                             float* HWY_RESTRICT out, int64_t* HWY_RESTRICT idx) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const int64_t h0 = oh * kh;
  const float* row = x + h0 * iw + j * KW;
  V c[KW];
  load_columns<KW>(d, row, c);
  V best = c[0];
  auto offset = hn::Zero(di);  // of the best element from the window's corner
  auto take = [&](V v, int64_t off) {
    const auto m = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
    best = hn::IfThenElse(m, v, best);
    offset = hn::IfThenElse(hn::RebindMask(di, m), hn::Set(di, static_cast<int32_t>(off)), offset);
  };
  for (int dx = 1; dx < KW; ++dx) take(c[dx], dx);
  for (int64_t dy = 1; dy < kh; ++dy) {
    load_columns<KW>(d, row + dy * iw, c);
    for (int dx = 0; dx < KW; ++dx) take(c[dx], dy * iw + dx);
  }
  hn::StoreU(best, d, out + j);
  if (idx)
    hn::StoreInterleaved2(hn::Add(corners<KW>(di, h0, iw, j), offset), hn::Zero(di), di,
                          reinterpret_cast<int32_t*>(idx + j));
}

// Input rows oh * kh .. oh * kh + kh - 1, columns j * KW .. (j + Lanes(d)) * KW - 1
// of grad_in from outputs j .. j + Lanes(d) - 1 of row oh (go, idx point at the row).
template <int KW, class D>
HWY_INLINE void backward_span(D d, const float* HWY_RESTRICT go, const int64_t* HWY_RESTRICT idx, int64_t iw,
                              int64_t kh, int64_t oh, int64_t j, float* HWY_RESTRICT gin) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const int64_t h0 = oh * kh;
  const V g = hn::LoadU(d, go + j);
  hn::Vec<decltype(di)> lo, hi;
  hn::LoadInterleaved2(di, reinterpret_cast<const int32_t*>(idx + j), lo, hi);
  const auto offset = hn::Sub(lo, corners<KW>(di, h0, iw, j));
  for (int64_t dy = 0; dy < kh; ++dy) {
    V c[KW];
    for (int dx = 0; dx < KW; ++dx)
      c[dx] = hn::IfThenElseZero(hn::RebindMask(d, hn::Eq(offset, hn::Set(di, static_cast<int32_t>(dy * iw + dx)))),
                                 g);
    store_columns<KW>(d, c, gin + (h0 + dy) * iw + j * KW);
  }
}

// Runs span(d, j) over a row of ow outputs if a vector of d fits in it.
template <class D, class F>
HWY_INLINE bool spans_of(D d, int64_t ow, const F& span) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  if (ow < n) return false;
  int64_t j = 0;
  for (; j + n <= ow; j += n) span(d, j);
  if (j < ow) span(d, ow - n);
  return true;
}

// The widest vector that fits the row: full, 8, 4, then 1 lane.
template <class F>
HWY_INLINE void for_spans(int64_t ow, const F& span) {
  if (spans_of(hn::ScalableTag<float>(), ow, span) || spans_of(hn::CappedTag<float, 8>(), ow, span) ||
      spans_of(hn::CappedTag<float, 4>(), ow, span))
    return;
  spans_of(hn::CappedTag<float, 1>(), ow, span);
}

template <int KW>
void forward_planes(const PoolParams& p, const float* in, float* out, int64_t* indices, int64_t begin, int64_t end) {
  const int64_t iw = p.iw, kh = p.kh, oh_n = p.oh, ow = p.ow, ip = p.ih * p.iw, op = p.oh * p.ow;
  for (int64_t plane = begin; plane < end; ++plane) {
    const float* x = in + plane * ip;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      float* o = out + plane * op + oh * ow;
      int64_t* idx = indices ? indices + plane * op + oh * ow : nullptr;
      for_spans(ow, [&](auto d, int64_t j) { forward_span<KW>(d, x, iw, kh, oh, j, o, idx); });
    }
  }
}

template <int KW>
void backward_planes(const PoolParams& p, const float* gout, const int64_t* indices, float* gin, int64_t begin,
                     int64_t end) {
  const int64_t ih = p.ih, iw = p.iw, kh = p.kh, oh_n = p.oh, ow = p.ow, ip = p.ih * p.iw, op = p.oh * p.ow;
  for (int64_t plane = begin; plane < end; ++plane) {
    float* g = gin + plane * ip;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      const float* go = gout + plane * op + oh * ow;
      const int64_t* idx = indices + plane * op + oh * ow;
      for_spans(ow, [&](auto d, int64_t j) { backward_span<KW>(d, go, idx, iw, kh, oh, j, g); });
      // Columns past the last window (floor mode) get no gradient.
      for (int64_t h = oh * kh; h < (oh + 1) * kh; ++h) std::fill(g + h * iw + ow * KW, g + (h + 1) * iw, 0.0f);
    }
    std::fill(g + oh_n * kh * iw, g + ih * iw, 0.0f);
  }
}

void MaxPoolForwardF32(const PoolParams& p, const float* in, float* out, int64_t* indices, int64_t begin,
                       int64_t end) {
  switch (p.kw) {
    case 2: return forward_planes<2>(p, in, out, indices, begin, end);
    case 3: return forward_planes<3>(p, in, out, indices, begin, end);
    default: return forward_planes<4>(p, in, out, indices, begin, end);
  }
}

void MaxPoolBackwardF32(const PoolParams& p, const float* gout, const int64_t* indices, float* gin, int64_t begin,
                        int64_t end) {
  switch (p.kw) {
    case 2: return backward_planes<2>(p, gout, indices, gin, begin, end);
    case 3: return backward_planes<3>(p, gout, indices, gin, begin, end);
    default: return backward_planes<4>(p, gout, indices, gin, begin, end);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::pool_vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember {
namespace pool_vec {
HWY_EXPORT(MaxPoolForwardF32);
HWY_EXPORT(MaxPoolBackwardF32);
}  // namespace pool_vec

namespace {

// Runs f(begin, end) over ranges of the n * c planes in parallel.
template <typename F>
void for_plane_ranges(const PoolParams& p, F&& f) {
  parallel_for(0, p.n * p.c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, p.ih * p.iw)), f);
}

void max_pool2d_cpu(const PoolParams& p, const void* in, void* out, int64_t* indices) {
  if (!max_pool2d_vec_applies(p)) return max_pool2d_ref(p, in, out, indices);
  for_plane_ranges(p, [&](int64_t b, int64_t e) {
    HWY_DYNAMIC_DISPATCH(pool_vec::MaxPoolForwardF32)(p, static_cast<const float*>(in), static_cast<float*>(out),
                                                      indices, b, e);
  });
}

void max_pool2d_backward_cpu(const PoolParams& p, const void* grad_out, const int64_t* indices, void* grad_in) {
  if (!max_pool2d_vec_applies(p)) return max_pool2d_backward_ref(p, grad_out, indices, grad_in);
  for_plane_ranges(p, [&](int64_t b, int64_t e) {
    HWY_DYNAMIC_DISPATCH(pool_vec::MaxPoolBackwardF32)(p, static_cast<const float*>(grad_out), indices,
                                                       static_cast<float*>(grad_in), b, e);
  });
}

}  // namespace

bool max_pool2d_vec_applies(const PoolParams& p) {
  return std::endian::native == std::endian::little && p.dtype == ScalarType::Float32 && p.kh == p.sh &&
         p.kw == p.sw && p.kh <= 4 && p.kw >= 2 && p.kw <= 4 && p.dh == 1 && p.dw == 1 && p.pt == 0 && p.pl == 0 &&
         p.oh == p.ih / p.kh && p.ow == p.iw / p.kw && p.ih * p.iw <= std::numeric_limits<int32_t>::max();
}

EMBER_REGISTER_KERNEL(max_pool2d, CPU, max_pool2d_cpu);
EMBER_REGISTER_KERNEL(max_pool2d_with_indices, CPU, max_pool2d_cpu);
EMBER_REGISTER_KERNEL(max_pool2d_backward, CPU, max_pool2d_backward_cpu);

}  // namespace ember
#endif

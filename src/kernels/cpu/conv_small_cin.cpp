// Convolution forward and weight gradient for few input channels (an image
// model's first layer), vectorized with Highway; this file is compiled once
// per target by foreach_target.h. Every other convolution goes to oneDNN
// (conv_dnnl.cpp), and conv_ref.cpp's loops are the oracle of this one.
//
// Why not oneDNN here: its AVX2 kernels pad 1 input channel to a block of 8
// and compute 8x the work, and its plain-layout fallback (im2col + GEMM)
// runs a K = 9 GEMM at ~13 GFLOP/s. W1's first layer (1 -> 32 channels, 3x3,
// 28x28, batch 128) took 2.5 ms forward and 4.8 ms for the weight gradient
// per step that way, a seventh of the step.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/conv_small_cin.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/nn.h"

// Note [small-c_in convolution]: each image's input channels are copied into
// zero-padded planes of ph x pw (pw = iw + pl + pr). Output (oh, ow) then
// sits at flat position q = oh * pw + ow of a plane with pw columns, and tap
// (ci, i, j) reads padded plane ci at q + i * pw + j: every tap is one
// contiguous shifted stream, so an output channel is a 1-D stencil of
// c_in * kh * kw multiply-adds per vector. Positions q with ow >= OW are junk
// columns: the forward computes them into a scratch row and copies only the
// OW valid ones out; the weight gradient multiplies them by a zero gradient.
// Streams run past the plane by up to one vector plus (kh-1) rows and (kw-1)
// columns, so the scratch planes carry that much zeroed slack.

HWY_BEFORE_NAMESPACE();
namespace ember::conv_small {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct Geometry {
  int64_t ph, pw;    // padded plane
  int64_t q_count;   // OH * pw rounded up to whole vectors
  int64_t plane;     // floats per padded plane, slack included
  int64_t taps;      // c_in * kh * kw
  std::vector<int64_t> offset;  // per tap: plane * ci + i * pw + j
};

Geometry geometry(const ConvParams& p, int64_t lanes) {
  Geometry g;
  g.ph = p.ih + p.pt + p.pb;
  g.pw = p.iw + p.pl + p.pr;
  g.q_count = (p.oh * g.pw + lanes - 1) / lanes * lanes;
  g.plane = g.q_count + (p.kh - 1) * g.pw + (p.kw - 1) + lanes;
  g.plane = std::max(g.plane, g.ph * g.pw);
  g.taps = p.c_in * p.kh * p.kw;
  for (int64_t ci = 0; ci < p.c_in; ++ci)
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j) g.offset.push_back(ci * g.plane + i * g.pw + j);
  return g;
}

// Copies image n's channels into the zeroed padded planes (borders stay 0).
void pad_image(const ConvParams& p, const Geometry& g, const float* in, int64_t n, float* xpad) {
  for (int64_t ci = 0; ci < p.c_in; ++ci) {
    const float* src = in + (n * p.c_in + ci) * p.ih * p.iw;
    float* dst = xpad + ci * g.plane + p.pt * g.pw + p.pl;
    for (int64_t h = 0; h < p.ih; ++h) std::memcpy(dst + h * g.pw, src + h * p.iw, sizeof(float) * p.iw);
  }
}

template <int TAPS>
void forward_images(const ConvParams& p, const Geometry& g, const float* in, const float* w, const float* bias,
                    float* out, int64_t begin, int64_t end) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  std::vector<float> xpad(static_cast<size_t>(p.c_in * g.plane), 0.0f);
  std::vector<float> row(static_cast<size_t>(g.q_count));
  for (int64_t n = begin; n < end; ++n) {
    pad_image(p, g, in, n, xpad.data());
    for (int64_t oc = 0; oc < p.c_out; ++oc) {
      decltype(hn::Zero(d)) wv[TAPS];
      for (int t = 0; t < TAPS; ++t) wv[t] = hn::Set(d, w[oc * TAPS + t]);
      const auto b = hn::Set(d, bias ? bias[oc] : 0.0f);
      for (int64_t q = 0; q < g.q_count; q += lanes) {
        auto acc = b;
        for (int t = 0; t < TAPS; ++t) acc = hn::MulAdd(wv[t], hn::LoadU(d, xpad.data() + g.offset[t] + q), acc);
        hn::StoreU(acc, d, row.data() + q);
      }
      float* o = out + (n * p.c_out + oc) * p.oh * p.ow;
      for (int64_t h = 0; h < p.oh; ++h) std::memcpy(o + h * p.ow, row.data() + h * g.pw, sizeof(float) * p.ow);
    }
  }
}

// Adds images [begin, end)'s weight (and bias) gradients to gw / gb (double:
// 10^5 terms per weight at W1's size).
template <int TAPS>
void weight_grad_images(const ConvParams& p, const Geometry& g, const float* in, const float* gout, double* gw,
                        double* gb, int64_t begin, int64_t end) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  std::vector<float> xpad(static_cast<size_t>(p.c_in * g.plane), 0.0f);
  std::vector<float> dy(static_cast<size_t>(g.q_count), 0.0f);  // junk columns and tail stay 0
  for (int64_t n = begin; n < end; ++n) {
    pad_image(p, g, in, n, xpad.data());
    for (int64_t oc = 0; oc < p.c_out; ++oc) {
      const float* go = gout + (n * p.c_out + oc) * p.oh * p.ow;
      for (int64_t h = 0; h < p.oh; ++h) std::memcpy(dy.data() + h * g.pw, go + h * p.ow, sizeof(float) * p.ow);
      decltype(hn::Zero(d)) acc[TAPS];
      for (int t = 0; t < TAPS; ++t) acc[t] = hn::Zero(d);
      auto accb = hn::Zero(d);
      for (int64_t q = 0; q < g.q_count; q += lanes) {
        const auto gv = hn::LoadU(d, dy.data() + q);
        accb = hn::Add(accb, gv);
        for (int t = 0; t < TAPS; ++t) acc[t] = hn::MulAdd(gv, hn::LoadU(d, xpad.data() + g.offset[t] + q), acc[t]);
      }
      for (int t = 0; t < TAPS; ++t) gw[oc * TAPS + t] += hn::GetLane(hn::SumOfLanes(d, acc[t]));
      gb[oc] += hn::GetLane(hn::SumOfLanes(d, accb));
    }
  }
}

template <int TAPS>
void run_forward(const ConvParams& p, const float* in, const float* w, const float* bias, float* out) {
  const hn::ScalableTag<float> d;
  const Geometry g = geometry(p, static_cast<int64_t>(hn::Lanes(d)));
  parallel_for(0, p.n, 1, [&](int64_t b, int64_t e) { forward_images<TAPS>(p, g, in, w, bias, out, b, e); });
}

// One partial sum per thread's share of the batch, added in a fixed order:
// the result depends on the thread count only, not on scheduling.
template <int TAPS>
void run_weight_grad(const ConvParams& p, const float* in, const float* gout, float* gw, float* gb) {
  const hn::ScalableTag<float> d;
  const Geometry g = geometry(p, static_cast<int64_t>(hn::Lanes(d)));
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), p.n));
  const size_t per = static_cast<size_t>(p.c_out * (TAPS + 1));
  std::vector<double> partial(static_cast<size_t>(chunks) * per, 0.0);
  parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      double* pw = partial.data() + static_cast<size_t>(c) * per;
      weight_grad_images<TAPS>(p, g, in, gout, pw, pw + p.c_out * TAPS, p.n * c / chunks, p.n * (c + 1) / chunks);
    }
  });
  for (int64_t k = 0; k < p.c_out * TAPS; ++k) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(c) * per + static_cast<size_t>(k)];
    gw[k] = static_cast<float>(s);
  }
  if (!gb) return;
  for (int64_t oc = 0; oc < p.c_out; ++oc) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c)
      s += partial[static_cast<size_t>(c) * per + static_cast<size_t>(p.c_out * TAPS + oc)];
    gb[oc] = static_cast<float>(s);
  }
}

// The tap count is a template parameter so the accumulators stay in
// registers (at most 12 + 3 vectors: AVX2 has 16).
template <typename F>
void with_taps(int64_t taps, F&& f) {
  switch (taps) {
#define EMBER_TAPS_CASE(k) \
  case k:                  \
    return f(std::integral_constant<int, k>{});
    EMBER_TAPS_CASE(1) EMBER_TAPS_CASE(2) EMBER_TAPS_CASE(3) EMBER_TAPS_CASE(4) EMBER_TAPS_CASE(5)
    EMBER_TAPS_CASE(6) EMBER_TAPS_CASE(7) EMBER_TAPS_CASE(8) EMBER_TAPS_CASE(9) EMBER_TAPS_CASE(10)
    EMBER_TAPS_CASE(11) EMBER_TAPS_CASE(12)
#undef EMBER_TAPS_CASE
    default: break;
  }
}

void ConvSmallForwardF32(const ConvParams& p, const float* in, const float* w, const float* bias, float* out) {
  with_taps(p.c_in * p.kh * p.kw, [&](auto taps) { run_forward<decltype(taps)::value>(p, in, w, bias, out); });
}

void ConvSmallWeightGradF32(const ConvParams& p, const float* in, const float* gout, float* gw, float* gb) {
  with_taps(p.c_in * p.kh * p.kw, [&](auto taps) { run_weight_grad<decltype(taps)::value>(p, in, gout, gw, gb); });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::conv_small
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember {
namespace conv_small {
HWY_EXPORT(ConvSmallForwardF32);
HWY_EXPORT(ConvSmallWeightGradF32);
}  // namespace conv_small

bool conv2d_small_cin_applies(const ConvParams& p) {
  return p.dtype == ScalarType::Float32 && p.groups == 1 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
         p.c_in * p.kh * p.kw <= 12 && p.n > 0 && p.c_out > 0 && p.oh > 0 && p.ow > 0 &&
         p.oh == p.ih + p.pt + p.pb - p.kh + 1 && p.ow == p.iw + p.pl + p.pr - p.kw + 1;
}

void conv2d_small_cin(const ConvParams& p, const void* in, const void* w, const void* bias, void* out) {
  HWY_DYNAMIC_DISPATCH(conv_small::ConvSmallForwardF32)(p, static_cast<const float*>(in),
                                                        static_cast<const float*>(w),
                                                        static_cast<const float*>(bias), static_cast<float*>(out));
}

void conv2d_small_cin_weight_grad(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                  void* grad_bias) {
  HWY_DYNAMIC_DISPATCH(conv_small::ConvSmallWeightGradF32)(p, static_cast<const float*>(in),
                                                           static_cast<const float*>(grad_out),
                                                           static_cast<float*>(grad_w), static_cast<float*>(grad_bias));
}

}  // namespace ember
#endif

// The static int8 reference loops: exact int32 products, then the float
// epilogue in the order oneDNN applies it ((acc + bias / (sx * sw)) * sx * sw
// [/ s_dst]), so a requantized output differs from the oneDNN kernel's by at
// most one step where a float rounding lands on a half.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "kernels/qgemm.h"
#include "kernels/qstatic.h"

namespace ember {

namespace {

int32_t load_q(const void* src, ScalarType t, int64_t i) {
  return t == ScalarType::UInt8 ? static_cast<int32_t>(static_cast<const uint8_t*>(src)[i])
                                : static_cast<int32_t>(static_cast<const int8_t*>(src)[i]);
}

// The epilogue of output channel c: float before the final store.
float epilogue(int32_t acc, int64_t c, const QActivation& src, const float* w_scale, const float* bias,
               const QEpilogue& e) {
  const float sxw = src.scale * w_scale[c];
  const float dst_div = e.dst_dtype == ScalarType::UInt8 ? e.dst_scale : 1.f;
  float y = (static_cast<float>(acc) + (bias ? bias[c] / sxw : 0.f)) * (sxw / dst_div);
  if (e.relu) y = std::max(y, 0.f);
  return y;  // in units of dst_scale for a uint8 output
}

void store(float y, const QEpilogue& e, void* dst, int64_t i) {
  if (e.dst_dtype == ScalarType::Float32) {
    static_cast<float*>(dst)[i] = y;
    return;
  }
  const float q = std::nearbyint(y);
  static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(std::isnan(q) ? 0.f : std::clamp(q, 0.f, 255.f));  // NaN: 0
}

}  // namespace

void quantize_activation(const float* x, void* q, int64_t n, const QActivation& a) {
  EMBER_CHECK(a.scale > 0 && std::isfinite(a.scale), "quantize_activation: scale must be positive, got {}", a.scale);
  EMBER_CHECK(a.dtype == ScalarType::UInt8 || a.dtype == ScalarType::Int8,
              "quantize_activation: dtype must be uint8 or int8");
  const float inv = 1.f / a.scale;
  // Both element types are one byte, so a chunk's offset is the same in x's elements and q's bytes.
  parallel_for(0, n, int64_t{1} << 16, [&](int64_t b, int64_t e) {
    if (a.dtype == ScalarType::UInt8) quantize_u8(x + b, static_cast<uint8_t*>(q) + b, e - b, inv, 0.f, 255.f);
    else quantize_s8(x + b, static_cast<int8_t*>(q) + b, e - b, inv);
  });
}

void qconv2d_ref(const QConvSpec& s, const void* src, const int8_t* w, const float* w_scale, const float* bias,
                 void* dst) {
  const ConvParams& p = s.p;
  const int64_t cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups;
  // The epilogue's float values (in dst units), pooled afterwards when asked.
  std::vector<float> y(static_cast<size_t>(p.n * p.c_out * p.oh * p.ow));
  parallel_for(0, p.n * p.c_out, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t nc = b0; nc < b1; ++nc) {
      const int64_t n = nc / p.c_out, co = nc % p.c_out, g = co / cout_g;
      for (int64_t oh = 0; oh < p.oh; ++oh)
        for (int64_t ow = 0; ow < p.ow; ++ow) {
          int32_t acc = 0;
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t kh = 0; kh < p.kh; ++kh) {
              const int64_t ih = oh * p.sh - p.pt + kh * p.dh;
              if (ih < 0 || ih >= p.ih) continue;
              for (int64_t kw = 0; kw < p.kw; ++kw) {
                const int64_t iw = ow * p.sw - p.pl + kw * p.dw;
                if (iw < 0 || iw >= p.iw) continue;
                const int64_t si = ((n * p.c_in + g * cin_g + ci) * p.ih + ih) * p.iw + iw;
                acc += load_q(src, s.src.dtype, si) * static_cast<int32_t>(w[((co * cin_g + ci) * p.kh + kh) * p.kw + kw]);
              }
            }
          y[static_cast<size_t>((nc * p.oh + oh) * p.ow + ow)] = epilogue(acc, co, s.src, w_scale, bias, s.out);
        }
    }
  });
  if (!s.pool) {
    for (size_t i = 0; i < y.size(); ++i) store(y[i], s.out, dst, static_cast<int64_t>(i));
    return;
  }
  // Max pooling commutes with the (monotonic) requantization: pool the float values, then store.
  const PoolParams& q = s.pool->params;
  EMBER_CHECK(s.pool->max, "qconv2d_ref: only max pooling is fused into an int8 conv");
  for (int64_t nc = 0; nc < p.n * p.c_out; ++nc)
    for (int64_t oh = 0; oh < q.oh; ++oh)
      for (int64_t ow = 0; ow < q.ow; ++ow) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t kh = 0; kh < q.kh; ++kh) {
          const int64_t ih = oh * q.sh - q.pt + kh * q.dh;
          if (ih < 0 || ih >= q.ih) continue;
          for (int64_t kw = 0; kw < q.kw; ++kw) {
            const int64_t iw = ow * q.sw - q.pl + kw * q.dw;
            if (iw >= 0 && iw < q.iw) m = std::max(m, y[static_cast<size_t>((nc * q.ih + ih) * q.iw + iw)]);
          }
        }
        store(m, s.out, dst, (nc * q.oh + oh) * q.ow + ow);
      }
}

void qlinear_ref(const QLinearSpec& s, const void* src, const int8_t* w, const float* w_scale, const float* bias,
                 void* dst) {
  parallel_for(0, s.m, 1, [&](int64_t m0, int64_t m1) {
    for (int64_t i = m0; i < m1; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        int32_t acc = 0;
        for (int64_t k = 0; k < s.k; ++k)
          acc += load_q(src, s.src.dtype, i * s.k + k) * static_cast<int32_t>(w[j * s.k + k]);
        store(epilogue(acc, j, s.src, w_scale, bias, s.out), s.out, dst, i * s.n + j);
      }
  });
}

}  // namespace ember

// The dynamic int8 linear layer (Note [dynamic int8 linear], kernels/qgemm.h):
// range, activation quantization, int8 GEMM, float epilogue.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/quant/qtensor.h"
#include "kernels/qgemm.h"
#include "kernels/scratch.h"

namespace ember {

void qlinear_dynamic_f32(const QLinearDynamicArgs& a, bool reference) {
  EMBER_CHECK(a.k <= kQGemmMaxK, "linear_dynamic_int8: in_features {} exceeds {} (int32 accumulation)", a.k, kQGemmMaxK);
  const int64_t total = a.m * a.k;
  float lo = 0, hi = 0;
  {
    float mn = std::numeric_limits<float>::infinity(), mx = -mn;
    for (int64_t i = 0; i < total; ++i) {
      mn = std::min(mn, a.x[i]);
      mx = std::max(mx, a.x[i]);
    }
    if (total > 0) lo = mn, hi = mx;
  }
  const quant::QParams qp = quant::choose_qparams(lo, hi, 0, a.reduce_range ? 127 : 255);
  const float inv = 1.0f / static_cast<float>(qp.scale);
  const int64_t zx = qp.zero_point, qhi = a.reduce_range ? 127 : 255;
  ScratchBuffer qbuf(static_cast<size_t>(total)), acc_buf(static_cast<size_t>(a.m * a.n) * sizeof(int32_t));
  auto* qx = static_cast<uint8_t*>(qbuf.get());
  auto* acc = static_cast<int32_t*>(acc_buf.get());
  parallel_for(0, total, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float r = std::nearbyint(a.x[i] * inv) + static_cast<float>(zx);
      // NaN (left out of the range) becomes 0 rather than an undefined cast.
      qx[i] = static_cast<uint8_t>(r > 0 ? (r < static_cast<float>(qhi) ? r : static_cast<float>(qhi)) : 0.0f);
    }
  });
  QGemmArgs g{qx, a.k, a.w, a.k, acc, a.n, a.m, a.n, a.k};
  // Without VNNI, oneDNN's u8 x s8 products may saturate in int16 pairs
  // unless the activations keep 7 bits: full-range activations (a file
  // written on a VNNI machine) take the exact loop there.
  if (reference || (!a.reduce_range && !cpu_has_vnni())) qgemm_u8s8s32_ref(g);
  else qgemm_u8s8s32(g);
  const float sx = static_cast<float>(qp.scale);
  const int32_t z = static_cast<int32_t>(zx);
  parallel_for(0, a.m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, a.n)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int32_t* row = acc + i * a.n;
      float* out = a.y + i * a.n;
      for (int64_t j = 0; j < a.n; ++j) {
        // int64: col sums come from files and must not overflow (int32 wraps are undefined).
        const float v = static_cast<float>(static_cast<int64_t>(row[j]) - static_cast<int64_t>(z) * a.colsum[j]) *
                        (sx * a.w_scale[j]);
        out[j] = a.bias ? v + a.bias[j] : v;
      }
    }
  });
}

}  // namespace ember

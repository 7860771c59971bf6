// The dynamic int8 linear layer (Note [dynamic int8 linear], kernels/qgemm.h):
// range, activation quantization, int8 GEMM, float epilogue.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/quant/qtensor.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/qgemm.h"
#include "kernels/scratch.h"

namespace ember {

void qlinear_dynamic_f32(const QLinearDynamicArgs& a, bool reference) {
  qlinear_dynamic_f32_with(a, [&](const uint8_t* qx, int32_t* acc) {
    QGemmArgs g{qx, a.k, a.w, a.k, acc, a.n, a.m, a.n, a.k};
    // Without VNNI, oneDNN's u8 x s8 products may saturate in int16 pairs
    // unless the activations keep 7 bits: full-range activations (a file
    // written on a VNNI machine) take the exact loop there.
    if (reference || (!a.reduce_range && !cpu_has_vnni())) qgemm_u8s8s32_ref(g);
    else qgemm_u8s8s32(g);
  });
}

void qlinear_dynamic_f32_with(const QLinearDynamicArgs& a, const QGemmFn& gemm) {
  EMBER_CHECK(a.k <= kQGemmMaxK, "linear_dynamic_int8: in_features {} exceeds {} (int32 accumulation)", a.k, kQGemmMaxK);
  const int64_t total = a.m * a.k;
  float lo = 0, hi = 0;
  if (total > 0) {
    // The vectorized extremes (vec_f32.h) are NaN when x holds a NaN; then
    // the loop below finds the range of the numbers.
    lo = vec::min_f32(a.x, total), hi = vec::max_f32(a.x, total);
  }
  if (total > 0 && (std::isnan(lo) || std::isnan(hi))) {
    // Independent lanes so the compiler vectorizes the reduction; NaN is left out.
    constexpr int kLanes = 16;
    float mn[kLanes], mx[kLanes];
    for (int l = 0; l < kLanes; ++l) mn[l] = std::numeric_limits<float>::infinity(), mx[l] = -mn[l];
    int64_t i = 0;
    for (; i + kLanes <= total; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float v = a.x[i + l];
        mn[l] = v < mn[l] ? v : mn[l];
        mx[l] = v > mx[l] ? v : mx[l];
      }
    for (; i < total; ++i) {
      mn[0] = a.x[i] < mn[0] ? a.x[i] : mn[0];
      mx[0] = a.x[i] > mx[0] ? a.x[i] : mx[0];
    }
    lo = *std::min_element(mn, mn + kLanes);
    hi = *std::max_element(mx, mx + kLanes);
    if (lo > hi) lo = hi = 0;  // all NaN
  }
  const quant::QParams qp = quant::choose_qparams(lo, hi, 0, a.reduce_range ? 127 : 255);
  const float inv = 1.0f / static_cast<float>(qp.scale);
  const int64_t zx = qp.zero_point;
  const float qhi = a.reduce_range ? 127.0f : 255.0f, zf = static_cast<float>(zx);
  ScratchBuffer qbuf(static_cast<size_t>(total)), acc_buf(static_cast<size_t>(a.m * a.n) * sizeof(int32_t));
  auto* qx = static_cast<uint8_t*>(qbuf.get());
  auto* acc = static_cast<int32_t*>(acc_buf.get());
  parallel_for(0, total, kGrainSize,
               [&](int64_t b, int64_t e) { quantize_u8(a.x + b, qx + b, e - b, inv, zf, qhi); });
  gemm(qx, acc);
  // Per column: the zero point's share and the combined scale. acc - zx *
  // colsum = sum_k (qx - zx) * w, at most 255 * 127 * k < 2^31 in size for k
  // <= kQGemmMaxK, so the difference is exact in 32-bit arithmetic; it is
  // computed unsigned (wrapping, defined) because the two terms alone may
  // exceed int32 (col sums come from files). 32-bit lanes vectorize; int64 did not.
  const float sx = static_cast<float>(qp.scale);
  ScratchBuffer col_buf(static_cast<size_t>(a.n) * (sizeof(uint32_t) + sizeof(float)));
  auto* offset = static_cast<uint32_t*>(col_buf.get());
  auto* scale = reinterpret_cast<float*>(offset + a.n);
  for (int64_t j = 0; j < a.n; ++j) {
    offset[j] = static_cast<uint32_t>(zx * static_cast<int64_t>(a.colsum[j]));
    scale[j] = sx * a.w_scale[j];
  }
  parallel_for(0, a.m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, a.n)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int32_t* row = acc + i * a.n;
      float* out = a.y + i * a.n;
      auto centred = [&](int64_t j) {
        return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(row[j]) - offset[j]));
      };
      if (a.bias) {
        for (int64_t j = 0; j < a.n; ++j) out[j] = centred(j) * scale[j] + a.bias[j];
      } else {
        for (int64_t j = 0; j < a.n; ++j) out[j] = centred(j) * scale[j];
      }
    }
  });
}

}  // namespace ember

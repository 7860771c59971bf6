// Highway implementations behind layer_norm_vec.h; this file is compiled once
// per target by foreach_target.h. A row is short (a model's width) and stays
// in L1 between the passes over it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/layer_norm_vec.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>

#include "kernels/cpu/layer_norm_vec.h"

HWY_BEFORE_NAMESPACE();
namespace ember::vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// The row's moments about its first element k = x[0]: returns mean - k,
// and rstd. Centred values are then (x - k) - (mean - k): for data far from
// zero (1e4 + N(0, 1)) x - k is exact, where x - mean would round mean to
// float32 first and lose three digits of every output.
HWY_INLINE void RowMoments(const float* HWY_RESTRICT x, int64_t d, float eps, float* shifted_mean, float* rstd) {
  const D df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const float k = x[0];
  const V vk = hn::Set(df, k);
  V acc = hn::Zero(df);
  int64_t j = 0;
  for (; j + N <= d; j += N) acc = hn::Add(acc, hn::Sub(hn::LoadU(df, x + j), vk));
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; j < d; ++j) sum += x[j] - k;
  const float m = sum / static_cast<float>(d);
  const V vm = hn::Set(df, m);
  acc = hn::Zero(df);
  for (j = 0; j + N <= d; j += N) {
    const V c = hn::Sub(hn::Sub(hn::LoadU(df, x + j), vk), vm);
    acc = hn::MulAdd(c, c, acc);
  }
  float sq = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; j < d; ++j) sq += (x[j] - k - m) * (x[j] - k - m);
  *shifted_mean = m;
  *rstd = 1.0f / std::sqrt(sq / static_cast<float>(d) + eps);
}

void LayerNormFwdF32(const float* HWY_RESTRICT x, const float* HWY_RESTRICT w, const float* HWY_RESTRICT b,
                     float* HWY_RESTRICT y, float* HWY_RESTRICT mean, float* HWY_RESTRICT rstd, int64_t rows,
                     int64_t d, float eps) {
  const D df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    RowMoments(xr, d, eps, &mean[r], &rstd[r]);
    const float k = xr[0], m = mean[r], s = rstd[r];
    const V vk = hn::Set(df, k), vm = hn::Set(df, m), vs = hn::Set(df, s);
    int64_t j = 0;
    for (; j + N <= d; j += N) {
      V v = hn::Mul(hn::Sub(hn::Sub(hn::LoadU(df, xr + j), vk), vm), vs);
      if (w) v = hn::Mul(v, hn::LoadU(df, w + j));
      if (b) v = hn::Add(v, hn::LoadU(df, b + j));
      hn::StoreU(v, df, yr + j);
    }
    for (; j < d; ++j) {
      float v = (xr[j] - k - m) * s;
      if (w) v *= w[j];
      if (b) v += b[j];
      yr[j] = v;
    }
  }
}

void LayerNormBwdF32(const float* HWY_RESTRICT g, const float* HWY_RESTRICT x, const float* HWY_RESTRICT mean,
                     const float* HWY_RESTRICT rstd, const float* HWY_RESTRICT w, float* HWY_RESTRICT dx,
                     float* HWY_RESTRICT dw_acc, float* HWY_RESTRICT db_acc, int64_t rows, int64_t d) {
  const D df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const float inv_d = 1.0f / static_cast<float>(d);
  for (int64_t r = 0; r < rows; ++r) {
    const float* gr = g + r * d;
    const float* xr = x + r * d;
    const float k = xr[0], m = mean[r], s = rstd[r];
    const V vk = hn::Set(df, k), vm = hn::Set(df, m), vs = hn::Set(df, s);
    V sum_gw = hn::Zero(df), sum_gwx = hn::Zero(df);
    int64_t j = 0;
    for (; j + N <= d; j += N) {
      const V gv = hn::LoadU(df, gr + j);
      const V xh = hn::Mul(hn::Sub(hn::Sub(hn::LoadU(df, xr + j), vk), vm), vs);
      const V gw = w ? hn::Mul(gv, hn::LoadU(df, w + j)) : gv;
      sum_gw = hn::Add(sum_gw, gw);
      sum_gwx = hn::MulAdd(gw, xh, sum_gwx);
      if (dw_acc) hn::StoreU(hn::MulAdd(gv, xh, hn::LoadU(df, dw_acc + j)), df, dw_acc + j);
      if (db_acc) hn::StoreU(hn::Add(gv, hn::LoadU(df, db_acc + j)), df, db_acc + j);
    }
    float a = hn::GetLane(hn::SumOfLanes(df, sum_gw)), c = hn::GetLane(hn::SumOfLanes(df, sum_gwx));
    for (; j < d; ++j) {
      const float xh = (xr[j] - k - m) * s, gw = w ? gr[j] * w[j] : gr[j];
      a += gw;
      c += gw * xh;
      if (dw_acc) dw_acc[j] += gr[j] * xh;
      if (db_acc) db_acc[j] += gr[j];
    }
    if (!dx) continue;
    float* dxr = dx + r * d;
    const float ma = a * inv_d, mc = c * inv_d;
    const V vma = hn::Set(df, ma), vmc = hn::Set(df, mc);
    for (j = 0; j + N <= d; j += N) {
      const V gv = hn::LoadU(df, gr + j);
      const V xh = hn::Mul(hn::Sub(hn::Sub(hn::LoadU(df, xr + j), vk), vm), vs);
      const V gw = w ? hn::Mul(gv, hn::LoadU(df, w + j)) : gv;
      // rstd * (gw - ma - xhat * mc)
      hn::StoreU(hn::Mul(vs, hn::Sub(hn::Sub(gw, vma), hn::Mul(xh, vmc))), df, dxr + j);
    }
    for (; j < d; ++j) {
      const float xh = (xr[j] - k - m) * s, gw = w ? gr[j] * w[j] : gr[j];
      dxr[j] = s * (gw - ma - xh * mc);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::vec {
HWY_EXPORT(LayerNormFwdF32);
HWY_EXPORT(LayerNormBwdF32);

void layer_norm_fwd_f32(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                        int64_t rows, int64_t d, float eps) {
  HWY_DYNAMIC_DISPATCH(LayerNormFwdF32)(x, w, b, y, mean, rstd, rows, d, eps);
}
void layer_norm_bwd_f32(const float* g, const float* x, const float* mean, const float* rstd, const float* w,
                        float* dx, float* dw_acc, float* db_acc, int64_t rows, int64_t d) {
  HWY_DYNAMIC_DISPATCH(LayerNormBwdF32)(g, x, mean, rstd, w, dx, dw_acc, db_acc, rows, d);
}
}  // namespace ember::vec
#endif

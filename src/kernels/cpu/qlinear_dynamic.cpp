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
  qlinear_dynamic_f32_with(a, [&](const uint8_t* qx, int32_t* acc, int64_t /*row*/, int64_t rows) {
    QGemmArgs g{qx, a.k, a.w, a.k, acc, a.n, rows, a.n, a.k};
    // Full-range activations (a file written on a VNNI machine) take the exact loop on a CPU without VNNI.
    if (reference || !qgemm_exact(a.reduce_range)) qgemm_u8s8s32_ref(g);
    else qgemm_u8s8s32(g);
  });
}

// Note [dynamic int8 rows]
// Rows are independent once the activation's range is known. A product big
// enough to repay a fork is cut into one block of rows per thread, and each
// thread finds its rows' range, meets the team, then quantizes, multiplies
// (oneDNN, single-threaded inside the region) and dequantizes its own rows:
// one parallel region and one barrier per layer, and the int32 products never
// cross cores. Smaller products run whole on the calling thread, oneDNN
// included. Measured on a 2-vCPU VM where an empty region costs 3.9 µs and a
// barrier 1.2 µs: the MLP 784-256-256-10 at batch 32 took 52.5 µs with oneDNN
// splitting every product across both threads and the rest on one, 33.5 µs
// on one thread for all of it, and layer 3 (256 -> 10) alone 10.8 µs on two
// threads against 3.4 µs on one (docs/performance.md).
std::vector<std::pair<int64_t, int64_t>> qlinear_dynamic_row_blocks(int64_t m, int64_t k, int64_t n, int threads) {
  constexpr int64_t kMinRows = 4;
  constexpr double kForkCosts = 3.0;
  const int64_t blocks = std::min<int64_t>(threads, m / kMinRows);
  if (blocks < 2) return {{0, m}};
  // One thread's time for the whole product, against what the split saves.
  // A split costs about three empty regions: the region, the barrier, the
  // worker's wake-up, and the slower work beside a spinning worker measured
  // on the VM. The rates are oneDNN's int8 GEMM on one core (300
  // MACs/ns measured with AVX-512 VNNI; a third of that assumed without),
  // so a slower CPU splits sooner, never later.
  const double macs_per_us = cpu_has_vnni() ? 300e3 : 100e3;
  const double alone_us = static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n) / macs_per_us;
  const double saved_us = alone_us * (1.0 - 1.0 / static_cast<double>(blocks));
  if (saved_us <= kForkCosts * parallel_region_cost_us()) return {{0, m}};
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < blocks; ++i) out.emplace_back(m * i / blocks, m * (i + 1) / blocks);
  return out;
}

// The range of x's numbers (NaN left out; 0 and 0 when there are none).
QRange qrange_f32(const float* x, int64_t total) {
  QRange r;
  if (total <= 0) return r;
  // The vectorized extremes (vec_f32.h) are NaN when x holds a NaN; then
  // the loop below finds the range of the numbers.
  vec::minmax_f32(x, total, &r.lo, &r.hi);
  if (!std::isnan(r.lo) && !std::isnan(r.hi)) return r;
  // Independent lanes so the compiler vectorizes the reduction; NaN is left out.
  constexpr int kLanes = 16;
  float mn[kLanes], mx[kLanes];
  for (int l = 0; l < kLanes; ++l) mn[l] = std::numeric_limits<float>::infinity(), mx[l] = -mn[l];
  int64_t i = 0;
  for (; i + kLanes <= total; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float v = x[i + l];
      mn[l] = v < mn[l] ? v : mn[l];
      mx[l] = v > mx[l] ? v : mx[l];
    }
  for (; i < total; ++i) {
    mn[0] = x[i] < mn[0] ? x[i] : mn[0];
    mx[0] = x[i] > mx[0] ? x[i] : mx[0];
  }
  r.lo = *std::min_element(mn, mn + kLanes);
  r.hi = *std::max_element(mx, mx + kLanes);
  if (r.lo > r.hi) r.lo = r.hi = 0;  // all NaN; choose_qparams widens every range to hold 0
  return r;
}

QActivationTerms dynamic_terms(QRange range, bool reduce_range, const int32_t* colsum, const float* w_scale, int64_t n,
                               uint32_t* offset, float* scale) {
  const int64_t qmax = reduce_range ? 127 : 255;
  const quant::QParams qp = quant::choose_qparams(range.lo, range.hi, 0, qmax);
  const int64_t zx = qp.zero_point;
  const auto sx = static_cast<float>(qp.scale);
  // Per column: the zero point's share and the combined scale. acc - zx *
  // colsum = sum_k (qx - zx) * w, at most 255 * 127 * k < 2^31 in size for
  // k <= kQGemmMaxK, so the difference is exact in 32-bit arithmetic; it is
  // computed unsigned (wrapping, defined) because the two terms alone may
  // exceed int32 (col sums come from files).
  for (int64_t j = 0; j < n; ++j) {
    offset[j] = static_cast<uint32_t>(zx * static_cast<int64_t>(colsum[j]));
    scale[j] = sx * w_scale[j];
  }
  return {1.0f / sx, static_cast<float>(zx), static_cast<float>(qmax)};
}

namespace {

// Quantizes, multiplies and dequantizes the rows of one block once the range is known.
class DynamicRows {
 public:
  DynamicRows(const QLinearDynamicArgs& a, const QGemmFn& gemm, uint8_t* qx, int32_t* acc)
      : a_(a), gemm_(gemm), qx_(qx), acc_(acc) {}

  // offset and scale: a.n scratch entries for this caller's column terms.
  void run(QRange range, int64_t b, int64_t e, uint32_t* offset, float* scale) const {
    const QActivationTerms q = dynamic_terms(range, a_.reduce_range, a_.colsum, a_.w_scale, a_.n, offset, scale);
    const int64_t k = a_.k, n = a_.n;
    quantize_u8(a_.x + b * k, qx_ + b * k, (e - b) * k, q.inv_scale, q.zero_point, q.qmax);
    gemm_(qx_ + b * k, acc_ + b * n, b, e - b);
    for (int64_t i = b; i < e; ++i) dequantize_row(acc_ + i * n, offset, scale, a_.bias, a_.y + i * n, n, a_.relu);
  }

 private:
  const QLinearDynamicArgs& a_;
  const QGemmFn& gemm_;
  uint8_t* qx_;
  int32_t* acc_;
};

}  // namespace

void qlinear_dynamic_f32_with(const QLinearDynamicArgs& a, const QGemmFn& gemm) {
  EMBER_CHECK(a.k <= kQGemmMaxK, "linear_dynamic_int8: in_features {} exceeds {} (int32 accumulation)", a.k, kQGemmMaxK);
  const auto blocks = qlinear_dynamic_row_blocks(a.m, a.k, a.n, get_num_threads());
  const auto nb = static_cast<int64_t>(blocks.size());
  ScratchBuffer qbuf(static_cast<size_t>(a.m * a.k)), acc_buf(static_cast<size_t>(a.m * a.n) * sizeof(int32_t)),
      col_buf(static_cast<size_t>(nb * a.n) * (sizeof(uint32_t) + sizeof(float)));
  const DynamicRows rows(a, gemm, static_cast<uint8_t*>(qbuf.get()), static_cast<int32_t*>(acc_buf.get()));
  auto* offsets = static_cast<uint32_t*>(col_buf.get());
  auto* scales = reinterpret_cast<float*>(offsets + nb * a.n);
  if (nb == 1) {
    const ThreadLimitGuard one_thread(1);  // oneDNN's product too (see the Note)
    return rows.run(qrange_f32(a.x, a.m * a.k), 0, a.m, offsets, scales);
  }
  // One team: each thread finds its rows' range, the team meets, and each
  // thread goes on with the whole range over its own rows.
  std::vector<QRange> part(static_cast<size_t>(nb));
  parallel_team(static_cast<int>(nb), [&](int tid, int team) {
    if (team != nb) {  // OpenMP gave fewer threads: split again for the team, ranges then rows
      const auto mine = qlinear_dynamic_row_blocks(a.m, a.k, a.n, team);
      const QRange r = qrange_f32(a.x, a.m * a.k);
      for (size_t i = static_cast<size_t>(tid); i < mine.size(); i += static_cast<size_t>(team))
        rows.run(r, mine[i].first, mine[i].second, offsets + tid * a.n, scales + tid * a.n);
      return;
    }
    const auto [b, e] = blocks[static_cast<size_t>(tid)];
    part[static_cast<size_t>(tid)] = qrange_f32(a.x + b * a.k, (e - b) * a.k);
    team_barrier();
    QRange r;  // 0 and 0: choose_qparams widens every range to hold 0 anyway
    for (const QRange& p : part) r = pooled(r, p);
    rows.run(r, b, e, offsets + tid * a.n, scales + tid * a.n);
  });
}

}  // namespace ember

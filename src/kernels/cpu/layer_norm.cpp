// Layer normalisation kernels: the rows go to layer_norm_vec.cpp's Highway
// loops, one pass per row each way, instead of the composite's eight ops
// forward and about fifteen backward.
#include <algorithm>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/cpu/layer_norm_vec.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/nn.h"

namespace ember {
namespace {

// Rows per block of the weight-gradient sums: the blocks' partial sums are
// added in block order, so dw and db do not depend on the thread count.
constexpr int64_t kBlockRows = 64;

void forward_cpu(const LayerNormParams& p, const float* x, const float* w, const float* b, float* y,
                 float* shifted_mean, float* rstd) {
  const int64_t d = p.d;
  parallel_for(0, p.rows, std::max<int64_t>(1, 16384 / d), [&](int64_t r0, int64_t r1) {
    vec::layer_norm_fwd_f32(x + r0 * d, w, b, y + r0 * d, shifted_mean + r0, rstd + r0, r1 - r0, d, p.eps);
  });
}

void backward_cpu(const LayerNormParams& p, const float* dy, const float* x, const float* shifted_mean,
                  const float* rstd, const float* w, float* dx, float* dw, float* db) {
  const int64_t d = p.d, blocks = (p.rows + kBlockRows - 1) / kBlockRows;
  const size_t part_size = static_cast<size_t>(blocks * d);
  std::vector<float> dw_part(dw ? part_size : 0), db_part(db ? part_size : 0);
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = blk * kBlockRows, n = std::min(kBlockRows, p.rows - r0);
      vec::layer_norm_bwd_f32(dy + r0 * d, x + r0 * d, shifted_mean + r0, rstd + r0, w, dx ? dx + r0 * d : nullptr,
                              dw ? dw_part.data() + blk * d : nullptr, db ? db_part.data() + blk * d : nullptr, n, d);
    }
  });
  for (auto [out, part] : {std::pair{dw, &dw_part}, std::pair{db, &db_part}}) {
    if (!out) continue;
    std::fill(out, out + d, 0.0f);
    for (int64_t blk = 0; blk < blocks; ++blk) vec::accumulate_f32(out, part->data() + blk * d, d);
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(layer_norm, CPU, forward_cpu);
EMBER_REGISTER_KERNEL(layer_norm_backward, CPU, backward_cpu);

}  // namespace ember

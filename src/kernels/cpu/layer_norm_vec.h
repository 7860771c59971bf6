// LayerNorm over the last d elements of contiguous float32 rows, forward and
// backward in Highway (dispatched at run time). PyTorch's definitions: biased
// variance, rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * w + b.
#pragma once

#include <cstdint>

namespace ember::vec {

// For each of `rows` rows of x: y, and the row's statistics for the backward:
// shifted_mean = mean - x[0] (the row's first element; see RowMoments) and
// rstd. w and b may be null (no affine weight or bias).
void layer_norm_fwd_f32(const float* x, const float* w, const float* b, float* y, float* shifted_mean, float* rstd,
                        int64_t rows, int64_t d, float eps);

// Given dy = g and the forward's statistics: dx (when not null) = rstd * (gw -
// mean(gw) - xhat * mean(gw * xhat)) with gw = g * w (g without w) and xhat =
// (x - mean) * rstd; and, when not null, dw_acc[j] += sum over rows of g *
// xhat, db_acc[j] += sum over rows of g.
void layer_norm_bwd_f32(const float* g, const float* x, const float* shifted_mean, const float* rstd, const float* w,
                        float* dx, float* dw_acc, float* db_acc, int64_t rows, int64_t d);

}  // namespace ember::vec

// Norms and distances between vectors with torch.nn.functional's names:
// normalize, cosine_similarity, pairwise_distance, pdist, and torch.cdist.
// Composites of differentiable ops.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

// input / max(||input||_p over dim, eps).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);
// Cosine of the angle between x1 and x2 (broadcast together) along dim; each
// norm is clamped at eps before dividing.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// ||x1 - x2 + eps||_p over the last dim (x1, x2 broadcast).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);
// input [N, M]: the p-norm distance of every pair of rows i < j, in
// row-major order of the upper triangle: [N * (N - 1) / 2].
Tensor pdist(const Tensor& input, double p = 2.0);
// x1 [*, P, M], x2 [*, R, M] -> [*, P, R] p-norm distances (batch dims broadcast).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);

}  // namespace ember

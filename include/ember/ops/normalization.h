// instance_norm, rms_norm and local_response_norm with torch.nn.functional's
// names and defaults (batch_norm, layer_norm and group_norm: activation.h).
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

// input (N, C, *): each (n, c) plane normalised by its own mean and biased
// variance (use_input_stats), then the per-channel affine. Given running
// stats are updated in place with the batch average of the instance stats
// (unbiased variance), like PyTorch. use_input_stats = false normalises with
// the running stats instead.
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = Tensor(), const Tensor& running_var = Tensor(),
                     const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);
// x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight;
// eps defaults to the dtype's machine epsilon (torch.finfo(dtype).eps).
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);
// input (N, C, *): x / (k + alpha * mean of x^2 over `size` neighbouring
// channels)^beta, the window zero-padded by size / 2 before and
// (size - 1) / 2 after.
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha = 1e-4, double beta = 0.75,
                           double k = 1.0);

}  // namespace ember

// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
#pragma once

#include <limits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::optim {

inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

// Scales the gradients of `params` in place so their joint norm_type-norm is
// at most max_norm, and returns that norm before clipping (a 0-dim tensor).
// Parameters without a gradient are skipped; with none at all the result is
// 0. A non-finite norm raises when error_if_nonfinite, else the gradients are
// scaled by it anyway (PyTorch's behaviour).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every gradient element into [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace ember::optim

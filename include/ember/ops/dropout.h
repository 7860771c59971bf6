// Channel and alpha dropout with torch.nn.functional's names (dropout and
// dropout2d: activation.h).
#pragma once

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

// Zeroes whole channels of (N, C, L) or unbatched (C, L) input with
// probability p (one draw per channel), survivors scaled by 1 / (1 - p).
Tensor dropout1d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// The same for (N, C, D, H, W) or unbatched (C, D, H, W) input.
Tensor dropout3d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// SELU's dropout: dropped elements take SELU's negative saturation value and
// an affine map keeps mean and variance. Identity unless training (PyTorch's
// F.alpha_dropout defaults training to false).
Tensor alpha_dropout(const Tensor& x, double p = 0.5, bool training = false, Generator* gen = nullptr);

// In-place forms (torch.dropout_, torch.alpha_dropout_; F.dropout(x,
// inplace=True)): the result is written into x, which is returned.
Tensor& dropout_(Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor& alpha_dropout_(Tensor& x, double p = 0.5, bool training = false, Generator* gen = nullptr);

}  // namespace ember

// torch.nn.utils: the gradient-clipping functions under PyTorch's names
// (defined in optim/clip_grad.h).
#pragma once

#include "ember/optim/clip_grad.h"

namespace ember::nn::utils {

// nn::utils::clip_grad_norm_(model->parameters(), 1.0) returns the total norm
// before clipping (a 0-dim tensor), as PyTorch does.
using optim::clip_grad_norm_;
using optim::clip_grad_value_;

}  // namespace ember::nn::utils

// The optimizers' plain tensor-op updates, line for line PyTorch 1.13's
// _single_tensor_* functions: the path for dtypes and layouts the fused loops
// do not take, and the reference the fused loops are tested against.
#pragma once

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sgd.h"

namespace ember::optim::detail {

void sgd_update_reference(const Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const SGDOptions& o);
void adam_update_reference(const Tensor& param, const Tensor& grad, AdamState& s, const AdamOptions& o,
                           bool decoupled_weight_decay);
void rmsprop_update_reference(const Tensor& param, const Tensor& grad, RMSpropState& s, const RMSpropOptions& o);
void adagrad_update_reference(const Tensor& param, const Tensor& grad, AdagradState& s, const AdagradOptions& o);

}  // namespace ember::optim::detail

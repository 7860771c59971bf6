// Operand casting for ops that autocast (see ember/core/autocast.h).
#pragma once

#include "ember/core/autocast.h"
#include "ember/core/tensor.h"

namespace ember {

// True when `t` is a float32 operand of an op running under autocast.
inline bool autocasts(const Tensor& t) { return Autocast::is_enabled() && t.defined() && t.dtype() == kFloat32; }

// t (float32) rounded to bfloat16 precision, as float32, in one pass;
// differentiable, with the gradient rounded the same way (what the casts
// t.to(kBFloat16).to(kFloat32) and their backward did, in twice the passes).
Tensor bf16_rounded(const Tensor& t);

}  // namespace ember

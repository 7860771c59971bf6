// Operand casting for ops that autocast (see ember/core/autocast.h).
#pragma once

#include "ember/core/autocast.h"
#include "ember/core/tensor.h"

namespace ember {

// True when `t` is a float32 operand of an op running under autocast.
inline bool autocasts(const Tensor& t) { return Autocast::is_enabled() && t.defined() && t.dtype() == kFloat32; }

// t rounded to bfloat16, as float32 (differentiable: the casts' backward
// carries the gradient, rounded to bf16 like autocast's).
inline Tensor bf16_rounded(const Tensor& t) { return t.to(kBFloat16).to(kFloat32); }

}  // namespace ember

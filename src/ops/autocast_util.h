// Operand casting for ops that autocast (see ember/core/autocast.h).
#pragma once

#include <optional>

#include "ember/core/autocast.h"
#include "ember/core/tensor.h"
#include "ember/core/trace_hook.h"
#include "kernels/native_bf16.h"

namespace ember {

// True when `t` is a float32 operand of an op running under autocast.
inline bool autocasts(const Tensor& t) { return Autocast::is_enabled() && t.defined() && t.dtype() == kFloat32; }

// Note [native bf16 autocast]: which implementation an autocast op takes,
// decided per call from the thread's setting and oneDNN's ISA (queried once).
// Native: conv (ConvParams::bf16), linear and 2-D mm/matmul
// (linear_bf16/mm_bf16 in linalg.cpp) hand float32 tensors to oneDNN's bf16
// primitives, which read bf16 operands and write float32 (outputs and
// gradients alike: the weight gradient keeps float32's precision, where
// torch's autocast rounds it to bf16). Emulated: the operands go through
// bf16_rounded and the float32 kernels run; bmm and batched matmul take
// this path everywhere. Both compute the same products (bf16 x bf16 is exact
// in float32) with float32 accumulation, in different orders.
// While tracing, autocast stays emulated: the recorded graph then replays
// the same float32 ops everywhere.
inline bool autocast_native_bf16() {
  return Autocast::native_bf16_allowed() && cpu_has_native_bf16() && trace_hook() == nullptr;
}

// The native paths of linalg_bf16.cpp, and whether one applies (float32
// operands of valid shapes; anything else takes the emulated path, which
// also reports bad arguments).
bool linear_bf16_applies(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias);
bool mm_bf16_applies(const Tensor& a, const Tensor& b);
Tensor linear_bf16(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias);
Tensor mm_bf16(const Tensor& a, const Tensor& b);

// t (float32) rounded to bfloat16 precision, as float32, in one pass;
// differentiable, with the gradient rounded the same way (what the casts
// t.to(kBFloat16).to(kFloat32) and their backward did, in twice the passes).
Tensor bf16_rounded(const Tensor& t);

}  // namespace ember

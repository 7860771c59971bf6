// Helpers for the optimizers' fused update loops: when every operand is a
// contiguous CPU float32/float64 tensor the update runs as one tight loop per
// element (split across threads for large parameters) instead of a chain of
// tensor ops that each walk memory again.
#pragma once

#include <initializer_list>
#include <type_traits>

#include "ember/core/parallel.h"
#include "ember/core/tensor.h"

namespace ember::optim::detail {

// Work per element is a few flops and a sqrt: split earlier than plain copies.
constexpr int64_t kUpdateGrain = 16384;

// True when param is a float32/float64 contiguous CPU tensor and every other
// operand is defined, contiguous, and has param's dtype and element count.
inline bool fusable(const Tensor& param, std::initializer_list<const Tensor*> others) {
  if (!param.device().is_cpu() || !param.is_contiguous()) return false;
  if (param.dtype() != kFloat32 && param.dtype() != kFloat64) return false;
  for (const Tensor* t : others) {
    if (!t->defined() || t->dtype() != param.dtype() || !t->is_contiguous() || t->numel() != param.numel() ||
        !(t->device() == param.device()))
      return false;
  }
  return true;
}

// Calls f(T{}) with T the C++ type of param's dtype (float or double).
template <typename F>
void dispatch_float(ScalarType dtype, F&& f) {
  if (dtype == kFloat32) f(float{});
  else f(double{});
}

// Calls f(std::bool_constant<b>...) so option flags become template
// parameters: the loops then carry no per-element branches on options.
template <typename F>
void bool_dispatch(F&& f) {
  f();
}
template <typename F, typename... Bs>
void bool_dispatch(F&& f, bool b, Bs... rest) {
  if (b) bool_dispatch([&](auto... c) { f(std::true_type{}, c...); }, rest...);
  else bool_dispatch([&](auto... c) { f(std::false_type{}, c...); }, rest...);
}

// Runs body(begin, end) over the parameter's elements.
template <typename Body>
void for_each_chunk(int64_t n, Body&& body) {
  parallel_for(0, n, kUpdateGrain, body);
}

}  // namespace ember::optim::detail

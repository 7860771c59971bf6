// Helpers that derivative formulas share.
#pragma once

#include "ember/core/grad_graph.h"

namespace ember {

// Sums a broadcast gradient back to `shape` (leading dims, and dims where
// shape has size 1).
Tensor sum_to(const Tensor& g, IntArrayRef shape);
// The gradient for `input`: sum_to its shape, cast to its dtype.
Tensor grad_for(const Tensor& g, const Tensor& input);
inline Tensor grad_for(const Tensor& g, IntArrayRef shape, ScalarType dtype) {
  Tensor r = sum_to(g, shape);
  return r.dtype() == dtype ? r : r.to(dtype);
}

// Runs an in-place op under autograd: `compute(old)` builds the new value out
// of place (recording a graph), the result is written into self, and self
// takes over the result's history. Refuses leaves, views and shared storage.
Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& compute);

}  // namespace ember

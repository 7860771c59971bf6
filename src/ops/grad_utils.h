// Helpers that derivative formulas share.
#pragma once

#include <optional>

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

// Where a broadcasting op's gradient goes for one input: summed back to the
// input's shape and cast to its dtype. It keeps the shape only when it differs
// from the output's, so the common same-shape op records no shape at all.
class GradTarget {
 public:
  GradTarget(const Tensor& input, const Tensor& out) : dtype_(input.dtype()) {
    const DimVector& in = input.impl()->sizes();
    if (!(in == out.impl()->sizes())) shape_.emplace(in);
  }
  Tensor operator()(const Tensor& g) const {
    Tensor r = shape_ ? sum_to(g, *shape_) : g;
    return r.dtype() == dtype_ ? r : r.to(dtype_);
  }

 private:
  std::optional<DimVector> shape_;
  ScalarType dtype_;
};

// Runs an in-place op under autograd: `compute(old)` builds the new value out
// of place (recording a graph), the result is written into self, and self
// takes over the result's history. Refuses leaves, views and shared storage.
Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& compute);

}  // namespace ember

// Helpers that derivative formulas share.
#pragma once

#include <memory>

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
// from the output's, and then on the heap: the common same-shape op records
// no shape, and its node stays small (every node byte is fresh memory per op).
class GradTarget {
 public:
  // Always inlined: out of line, the call cost more than the comparison.
  [[gnu::always_inline]] GradTarget(const Tensor& input, const Tensor& out) : dtype_(input.dtype()) {
    if (!(input.impl()->sizes() == out.impl()->sizes())) [[unlikely]]
      keep_shape(input.impl()->sizes());
  }
  Tensor operator()(const Tensor& g) const {
    Tensor r = shape_ ? sum_to(g, *shape_) : g;
    return r.dtype() == dtype_ ? r : r.to(dtype_);
  }

 private:
  void keep_shape(const DimVector& shape);

  // Shared and immutable: copies are cheap and the empty one's destructor
  // is a null check (a unique_ptr<DimVector>'s was an out-of-line call).
  std::shared_ptr<const DimVector> shape_;
  ScalarType dtype_;
};

// Runs an in-place op under autograd: `compute(old)` builds the new value out
// of place (recording a graph), the result is written into self, and self
// takes over the result's history. Refuses leaves, views and shared storage.
Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& compute);

// The in-place form of an out-of-place op: inplace_with_grad when x takes
// part in autograd, else the result copied into x.
Tensor& write_into(Tensor& x, const char* op, const std::function<Tensor(const Tensor&)>& compute);

}  // namespace ember

// The values of an "arange" graph node: start + i * step for i < out.numel(),
// computed as ember::arange computes them (integer arithmetic when start and
// step are integers, else double, then cast), so a replay is bitwise eager's.
#pragma once

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember::jit {

// out: a contiguous 1-D tensor of a numeric dtype.
void write_arange(Tensor& out, const Scalar& start, const Scalar& step);

}  // namespace ember::jit

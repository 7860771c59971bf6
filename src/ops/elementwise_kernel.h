// elementwise.cpp's kernel calls, for op files beside it (src/ops/math.cpp):
// cast to the compute dtype, broadcast, allocate, run the kernel, trace.
#pragma once

#include "core/op_registry.h"
#include "ember/core/tensor.h"

namespace ember::detail {
// op(a), computed and returned in dtype `dt`.
Tensor unary_kernel_op(Op op, const Tensor& a, ScalarType dt);
// op(a, b) broadcast, computed in `compute`, written as `out_dtype`.
Tensor binary_kernel_op(Op op, const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype);
}  // namespace ember::detail

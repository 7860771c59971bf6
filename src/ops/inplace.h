// In-place elementwise helpers shared by the Tensor methods.
#pragma once

#include "core/op_registry.h"
#include "ember/core/tensor.h"

namespace ember::detail {
Tensor& binary_inplace_op(Op op, Tensor& a, const Tensor& b);
Tensor& binary_inplace_op(Op op, Tensor& a, const Scalar& b);
Tensor& unary_inplace_op(Op op, Tensor& a);
}  // namespace ember::detail

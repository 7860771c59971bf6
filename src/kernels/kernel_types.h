// Kernel signatures, one per op family (see core/ops.def). Ops look kernels up
// with get_kernel<Signature>(Op::name, device).
#pragma once

#include <optional>

#include "core/op_registry.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "kernels/tensor_iter.h"

namespace ember {

// Scalar parameters of an elementwise op (fill value, clamp bounds).
struct ElementwiseParams {
  std::optional<Scalar> a, b;
};
using ElementwiseKernel = void(const TensorIter& iter, const ElementwiseParams& params);

inline void run_elementwise(Op op, const TensorIter& iter, const ElementwiseParams& p, Device d) {
  get_kernel<ElementwiseKernel>(op, d)(iter, p);
}

}  // namespace ember

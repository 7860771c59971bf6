// The one GEMM every linalg op lowers to (src/ops/linalg.cpp); the jit
// interpreter replays recorded matmul nodes through it.
#pragma once

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {

// out (contiguous [M, N] or [B, M, N]) = alpha * (a @ b + bias) + beta * out,
// a [M, K] or [B or 1, M, K], b [K, N] or [B or 1, K, N], bias [N] or null.
void gemm(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor* bias, const Scalar& alpha,
          const Scalar& beta);

}  // namespace ember

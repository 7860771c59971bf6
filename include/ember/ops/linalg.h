// Matrix products through oneDNN (float32, bfloat16), with a plain loop for
// the other dtypes.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

// torch.matmul: 1-D/2-D/batched with broadcasting of batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);    // [n, k] @ [k, m]
Tensor bmm(const Tensor& a, const Tensor& b);   // [B, n, k] @ [B, k, m]
// beta * input + alpha * (m1 @ m2)
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// x @ weight^T + bias, weight is [out_features, in_features].
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);

}  // namespace ember

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

// ---- more products (issue 20; src/ops/products.cpp) ----
Tensor mv(const Tensor& mat, const Tensor& vec);  // [n, m] @ [m]
// beta * input + alpha * (mat @ vec)
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// beta * input + alpha * outer(vec1, vec2)
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
            const Scalar& alpha = 1);
// beta * input + alpha * sum_b batch1[b] @ batch2[b]
Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
// beta * input + alpha * bmm(batch1, batch2)
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// Sum over the last dims of a and b.
Tensor inner(const Tensor& a, const Tensor& b);
// t^n by repeated squaring; n < 0 is inverse(t)^-n.
Tensor matrix_power(const Tensor& t, int64_t n);

// torch.inverse / torch.linalg.inv of [*, n, n] float32 or float64 matrices
// (src/ops/inverse.cpp); a singular one raises PyTorch's error.
Tensor inverse(const Tensor& t);
Tensor linalg_inv(const Tensor& t);

}  // namespace ember

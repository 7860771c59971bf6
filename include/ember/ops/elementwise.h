// Elementwise ops with broadcasting and PyTorch's type promotion.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

// Dtype of a binary op's result (torch.result_type): 0-dim tensors and
// scalars only raise the category (bool < int < float), never the width.
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
// PyTorch's canCast: no implicit cast to a lower category (float -> int).
bool can_cast(ScalarType from, ScalarType to);

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Scalar& b);  // b - a
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
// True division: integer inputs give the default float dtype.
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Scalar& b);
// Python's modulo: the result has the sign of the divisor.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& e);
Tensor pow(const Tensor& a, const Scalar& e);
Tensor pow(const Scalar& a, const Tensor& e);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& a);
Tensor isnan(const Tensor& a);
Tensor isfinite(const Tensor& a);
bool equal(const Tensor& a, const Tensor& b);  // same shape and values
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor clamp_min(const Tensor& a, const Scalar& min);
Tensor clamp_max(const Tensor& a, const Scalar& max);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);
Tensor lerp(const Tensor& a, const Tensor& end, const Scalar& weight);
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);

// Unary math. Integer inputs to float functions (exp, sqrt, ...) give the
// default float dtype, like PyTorch.
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor expm1(const Tensor& a);
Tensor log(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
// approximate: "none" (exact, erf) or "tanh".
Tensor gelu(const Tensor& a, std::string_view approximate = "none");
Tensor silu(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor round(const Tensor& a);  // half to even
Tensor trunc(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor square(const Tensor& a);

// In-place forms (write into `a`, bump its version).
Tensor& add_(Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_(Tensor& a, const Tensor& b);

}  // namespace ember

// Elementwise ops with broadcasting and PyTorch's type promotion.
#pragma once

#include <optional>
#include <string_view>

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
// A weight tensor broadcasts with a and end, and has their dtype (as in PyTorch).
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight);
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

// ---- more pointwise math (src/ops/math.cpp; torch's names and rules) ----
// Float functions: integer and bool inputs give the default float dtype.
Tensor tan(const Tensor& a);
Tensor asin(const Tensor& a);
Tensor acos(const Tensor& a);
Tensor atan(const Tensor& a);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor asinh(const Tensor& a);
Tensor acosh(const Tensor& a);
Tensor atanh(const Tensor& a);
Tensor log2(const Tensor& a);
Tensor log10(const Tensor& a);
Tensor exp2(const Tensor& a);
Tensor erfc(const Tensor& a);
Tensor erfinv(const Tensor& a);
Tensor lgamma(const Tensor& a);
Tensor digamma(const Tensor& a);
Tensor deg2rad(const Tensor& a);
Tensor rad2deg(const Tensor& a);
Tensor frac(const Tensor& a);  // a - trunc(a), floating point only
Tensor sinc(const Tensor& a);  // sin(pi a) / (pi a), 1 at 0
Tensor sgn(const Tensor& a);   // sign for real tensors
Tensor signbit(const Tensor& a);  // bool; true for -0.0
// log(a / (1 - a)), a clamped to [eps, 1 - eps] when eps is given.
Tensor logit(const Tensor& a, std::optional<double> eps = std::nullopt);
// NaN -> nan (0), +inf -> posinf (dtype max), -inf -> neginf (dtype lowest).
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);
// Round half to even at `decimals` digits (negative: left of the point).
Tensor round(const Tensor& a, int64_t decimals);

Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Scalar& b);
Tensor nextafter(const Tensor& a, const Tensor& b);
// C's fmod: the result has the sign of the dividend (remainder: the divisor's).
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Scalar& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Scalar& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);   // log(exp(a) + exp(b))
Tensor logaddexp2(const Tensor& a, const Tensor& b);  // log2(2^a + 2^b)
Tensor xlogy(const Tensor& a, const Tensor& b);       // a * log(b), 0 where a == 0
Tensor xlogy(const Tensor& a, const Scalar& b);
Tensor xlogy(const Scalar& a, const Tensor& b);
// pow computed and returned in float64.
Tensor float_power(const Tensor& a, const Tensor& e);
Tensor float_power(const Tensor& a, const Scalar& e);
Tensor float_power(const Scalar& a, const Tensor& e);
// maximum/minimum that ignore NaN (NaN only where both are NaN).
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
// rounding_mode: std::nullopt (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode);
// Tensor bounds, broadcast with a.
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor clamp_min(const Tensor& a, const Tensor& min);
Tensor clamp_max(const Tensor& a, const Tensor& max);

Tensor isinf(const Tensor& a);
Tensor isposinf(const Tensor& a);
Tensor isneginf(const Tensor& a);
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Whether each element of `elements` occurs in test_elements.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false, bool invert = false);
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false, bool invert = false);

// torch's aliases, one line each.
inline Tensor absolute(const Tensor& a) { return abs(a); }
inline Tensor arccos(const Tensor& a) { return acos(a); }
inline Tensor arccosh(const Tensor& a) { return acosh(a); }
inline Tensor arcsin(const Tensor& a) { return asin(a); }
inline Tensor arcsinh(const Tensor& a) { return asinh(a); }
inline Tensor arctan(const Tensor& a) { return atan(a); }
inline Tensor arctanh(const Tensor& a) { return atanh(a); }
inline Tensor arctan2(const Tensor& a, const Tensor& b) { return atan2(a, b); }
inline Tensor negative(const Tensor& a) { return neg(a); }
inline Tensor fix(const Tensor& a) { return trunc(a); }
inline Tensor multiply(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor multiply(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor subtract(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) { return sub(a, b, alpha); }
inline Tensor divide(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor divide(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor divide(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  return div(a, b, rounding_mode);
}
inline Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor clip(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) { return clamp(a, min, max); }
inline Tensor clip(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp(a, min, max);
}
inline Tensor greater(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor greater_equal(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor less(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor less_equal(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor not_equal(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor greater(const Tensor& a, const Scalar& b) { return gt(a, b); }
inline Tensor greater_equal(const Tensor& a, const Scalar& b) { return ge(a, b); }
inline Tensor less(const Tensor& a, const Scalar& b) { return lt(a, b); }
inline Tensor less_equal(const Tensor& a, const Scalar& b) { return le(a, b); }
inline Tensor not_equal(const Tensor& a, const Scalar& b) { return ne(a, b); }

// In-place forms (write into `a`, bump its version).
Tensor& add_(Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_(Tensor& a, const Tensor& b);

}  // namespace ember

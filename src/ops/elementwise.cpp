// Elementwise ops: dtype rules, broadcasting, output allocation; the loops
// are the kernels registered for each Op.
#include "ember/ops/elementwise.h"

#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/kernel_types.h"

namespace ember {
namespace {

Tensor as_dtype(const Tensor& t, ScalarType dt) { return t.dtype() == dt ? t : t.to(dt); }

// out = op(a, b) computed in `compute` dtype, written as `out_dtype`.
Tensor binary(Op op, const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype) {
  const char* name = op_name(op).data();
  Tensor a2 = as_dtype(a, compute), b2 = as_dtype(b, compute);
  DimVector shape = a.sizes().size() == b.sizes().size() &&
                            std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin())
                        ? DimVector(a.sizes())
                        : broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, TensorOptions(out_dtype).device(a.device()));
  TensorIter iter({&out, &a2, &b2}, 1, name);
  run_elementwise(op, iter, {}, a.device());
  return out;
}

// Writes op(a, b) into a (in-place): the result dtype must cast to a's
// dtype and the broadcast shape must equal a's shape.
Tensor& binary_inplace(Op op, Tensor& a, const Tensor& b, ScalarType compute) {
  const char* name = op_name(op).data();
  EMBER_CHECK(can_cast(compute, a.dtype()),
              "{}_: result type {} can't be cast to the desired output type {}", name,
              to_string(compute), to_string(a.dtype()));
  DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  EMBER_CHECK(shape == DimVector(a.sizes()),
              "{}_: output with shape [{}] doesn't match the broadcast shape [{}]", name,
              fmt::join(a.sizes(), ", "), fmt::join(shape, ", "));
  Tensor b2 = as_dtype(b, compute);
  if (compute == a.dtype()) {
    TensorIter iter({&a, &a, &b2}, 1, name);
    run_elementwise(op, iter, {}, a.device());
  } else {
    Tensor r = binary(op, a, b, compute, compute);
    copy_(a, r);
  }
  a.bump_version();
  return a;
}

Tensor wrap(const Scalar& s, ScalarType dt) { return scalar_tensor(s, dt); }

ScalarType float_result(ScalarType t) { return is_floating_point(t) ? t : kDefaultFloat; }

Tensor unary(Op op, const Tensor& a, ScalarType dt) {
  Tensor a2 = as_dtype(a, dt);
  Tensor out = empty(a.sizes(), TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &a2}, 1, op_name(op).data());
  run_elementwise(op, iter, {}, a.device());
  return out;
}
Tensor unary_float(Op op, const Tensor& a) { return unary(op, a, float_result(a.dtype())); }
Tensor unary_same(Op op, const Tensor& a) { return unary(op, a, a.dtype()); }

Tensor& unary_inplace(Op op, Tensor& a) {
  EMBER_CHECK(op == Op::neg || op == Op::abs || op == Op::relu || is_floating_point(a.dtype()),
              "{}_: result type {} can't be cast to the desired output type {}", op_name(op),
              to_string(kDefaultFloat), to_string(a.dtype()));
  TensorIter iter({&a, &a}, 1, op_name(op).data());
  run_elementwise(op, iter, {}, a.device());
  a.bump_version();
  return a;
}

void check_not_bool_sub(const Tensor& a, ScalarType other) {
  EMBER_CHECK(!(a.dtype() == kBool && other == kBool),
              "sub: subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.");
}

Tensor compare(Op op, const Tensor& a, const Tensor& b) {
  return binary(op, a, b, result_type(a, b), kBool);
}
Tensor compare(Op op, const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return binary(op, a, wrap(b, dt), dt, kBool);
}

Tensor logical(Op op, const Tensor& a, const Tensor& b) {
  return binary(op, as_dtype(a, kBool), as_dtype(b, kBool), kBool, kBool);
}

Tensor bitwise(Op op, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(is_integral(dt, true), "{}: only integer and bool tensors are supported, got {}",
                   op_name(op), to_string(dt));
  return binary(op, a, b, dt, dt);
}

}  // namespace

// Can a value of type `from` be written into `to` without changing category
// upwards (PyTorch's canCast)?
bool can_cast(ScalarType from, ScalarType to) {
  return type_category(from) <= type_category(to);
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  bool za = a.dim() == 0, zb = b.dim() == 0;
  if (za == zb) return promote_types(a.dtype(), b.dtype());
  ScalarType dimmed = za ? b.dtype() : a.dtype();
  ScalarType zero = za ? a.dtype() : b.dtype();
  return type_category(zero) > type_category(dimmed) ? promote_types(dimmed, zero) : dimmed;
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ScalarType s = b.default_dtype();
  return type_category(s) > type_category(a.dtype()) ? s : a.dtype();
}

// ---- arithmetic ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (!(alpha.is_integral() && alpha.to_long() == 1)) return add(a, mul(b, alpha));
  ScalarType dt = result_type(a, b);
  return binary(Op::add, a, b, dt, dt);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  ScalarType dt = result_type(a, b);
  Scalar v = alpha.is_integral() && alpha.to_long() == 1
                 ? b
                 : Scalar(b.to_double() * alpha.to_double());
  return binary(Op::add, a, wrap(v, dt), dt, dt);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_not_bool_sub(a, b.dtype());
  if (!(alpha.is_integral() && alpha.to_long() == 1)) return sub(a, mul(b, alpha));
  ScalarType dt = result_type(a, b);
  return binary(Op::sub, a, b, dt, dt);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_not_bool_sub(a, b.default_dtype());
  ScalarType dt = result_type(a, b);
  Scalar v = alpha.is_integral() && alpha.to_long() == 1
                 ? b
                 : Scalar(b.to_double() * alpha.to_double());
  return binary(Op::sub, a, wrap(v, dt), dt, dt);
}
Tensor rsub(const Tensor& a, const Scalar& b) {
  check_not_bool_sub(a, b.default_dtype());
  ScalarType dt = result_type(a, b);
  return binary(Op::sub, wrap(b, dt), a, dt, dt);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  return binary(Op::mul, a, b, dt, dt);
}
Tensor mul(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return binary(Op::mul, a, wrap(b, dt), dt, dt);
}
Tensor div(const Tensor& a, const Tensor& b) {
  ScalarType dt = float_result(result_type(a, b));
  return binary(Op::div, a, b, dt, dt);
}
Tensor div(const Tensor& a, const Scalar& b) {
  ScalarType dt = float_result(result_type(a, b));
  return binary(Op::div, a, wrap(b, dt), dt, dt);
}
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "floor_divide: not supported for bool tensors");
  return binary(Op::floor_divide, a, b, dt, dt);
}
Tensor floor_divide(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return floor_divide(a, wrap(b, dt));
}
Tensor remainder(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "remainder: not supported for bool tensors");
  return binary(Op::remainder, a, b, dt, dt);
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return remainder(a, wrap(b, dt));
}
Tensor pow(const Tensor& a, const Tensor& e) {
  ScalarType dt = result_type(a, e);
  EMBER_CHECK_TYPE(dt != kBool, "pow: not supported for bool tensors");
  return binary(Op::pow, a, e, dt, dt);
}
Tensor pow(const Tensor& a, const Scalar& e) {
  ScalarType dt = result_type(a, e);
  EMBER_CHECK_TYPE(dt != kBool, "pow: not supported for bool tensors");
  if (is_floating_point(dt)) {
    double v = e.to_double();
    if (v == 1.0) return as_dtype(a, dt).clone();
    if (v == 2.0) return mul(as_dtype(a, dt), as_dtype(a, dt));
    if (v == 0.5) return sqrt(as_dtype(a, dt));
  }
  return binary(Op::pow, a, wrap(e, dt), dt, dt);
}
Tensor pow(const Scalar& a, const Tensor& e) {
  ScalarType dt = result_type(e, a);
  return binary(Op::pow, wrap(a, dt), e, dt, dt);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  return binary(Op::maximum, a, b, dt, dt);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  return binary(Op::minimum, a, b, dt, dt);
}

// ---- comparisons and logic ----
Tensor eq(const Tensor& a, const Tensor& b) { return compare(Op::eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(Op::ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(Op::lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(Op::le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(Op::gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(Op::ge, a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return compare(Op::eq, a, b); }
Tensor ne(const Tensor& a, const Scalar& b) { return compare(Op::ne, a, b); }
Tensor lt(const Tensor& a, const Scalar& b) { return compare(Op::lt, a, b); }
Tensor le(const Tensor& a, const Scalar& b) { return compare(Op::le, a, b); }
Tensor gt(const Tensor& a, const Scalar& b) { return compare(Op::gt, a, b); }
Tensor ge(const Tensor& a, const Scalar& b) { return compare(Op::ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return logical(Op::logical_and, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical(Op::logical_or, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical(Op::logical_xor, a, b); }
Tensor logical_not(const Tensor& a) { return unary(Op::logical_not, as_dtype(a, kBool), kBool); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_and, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_or, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_xor, a, b); }
Tensor bitwise_not(const Tensor& a) {
  EMBER_CHECK_TYPE(is_integral(a.dtype(), true),
                   "bitwise_not: only integer and bool tensors are supported, got {}", to_string(a.dtype()));
  return unary_same(Op::bitwise_not, a);
}
Tensor isnan(const Tensor& a) {
  Tensor out = empty(a.sizes(), TensorOptions(kBool).device(a.device()));
  TensorIter iter({&out, &a}, 1, "isnan");
  run_elementwise(Op::isnan, iter, {}, a.device());
  return out;
}
Tensor isfinite(const Tensor& a) {
  if (!is_floating_point(a.dtype())) return ones(a.sizes(), kBool);
  return logical_not(logical_or(isnan(a), eq(abs(a), std::numeric_limits<double>::infinity())));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(), b.sizes().end())) return false;
  std::vector<bool> same = eq(a, b).to_vector<bool>();
  return std::all_of(same.begin(), same.end(), [](bool v) { return v; });
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  Tensor a64 = as_dtype(a, kFloat64), b64 = as_dtype(b, kFloat64);
  Tensor close = le(abs(sub(a64, b64)), add(mul(abs(b64), rtol), atol));
  close = logical_or(close, eq(a64, b64));  // equal infinities
  if (equal_nan) close = logical_or(close, logical_and(isnan(a64), isnan(b64)));
  std::vector<bool> ok = close.to_vector<bool>();
  return std::all_of(ok.begin(), ok.end(), [](bool v) { return v; });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_TYPE(cond.dtype() == kBool, "where: expected condition to be a bool tensor, got {}",
                   to_string(cond.dtype()));
  ScalarType dt = result_type(a, b);
  Tensor a2 = as_dtype(a, dt), b2 = as_dtype(b, dt);
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &cond, &a2, &b2}, 1, "where");
  run_elementwise(Op::where, iter, {}, a.device());
  return out;
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where(cond, a, wrap(b, result_type(a, b)));
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where(cond, wrap(a, result_type(b, a)), b);
}

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  ScalarType dt = a.dtype();
  if (min) dt = promote_types(dt, result_type(a, *min));
  if (max) dt = promote_types(dt, result_type(a, *max));
  EMBER_CHECK_TYPE(dt != kBool, "clamp: not supported for bool tensors");
  Tensor a2 = as_dtype(a, dt);
  Tensor out = empty(a.sizes(), TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &a2}, 1, "clamp");
  run_elementwise(Op::clamp, iter, {min, max}, a.device());
  return out;
}
Tensor clamp_min(const Tensor& a, const Scalar& min) { return clamp(a, min, std::nullopt); }
Tensor clamp_max(const Tensor& a, const Scalar& max) { return clamp(a, std::nullopt, max); }

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK_TYPE(mask.dtype() == kBool,
                   "masked_fill: expected a bool mask, got mask with dtype {}", to_string(mask.dtype()));
  Tensor out = where(mask, wrap(value, a.dtype()), a);
  if (!std::equal(out.sizes().begin(), out.sizes().end(), a.sizes().begin(), a.sizes().end()))
    EMBER_ERROR("masked_fill: mask of shape [{}] must broadcast to the input shape [{}]",
                fmt::join(mask.sizes(), ", "), fmt::join(a.sizes(), ", "));
  return out;
}

Tensor lerp(const Tensor& a, const Tensor& end, const Scalar& weight) {
  return add(a, mul(sub(end, a), weight));
}
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return add(a, mul(mul(t1, t2), value));
}
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return add(a, mul(div(t1, t2), value));
}

// ---- unary ----
Tensor neg(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool,
                   "neg: negation, the `-` operator, on a bool tensor is not supported. If you are "
                   "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary_same(Op::neg, a);
}
Tensor abs(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool, "abs: not supported for bool tensors");
  return unary_same(Op::abs, a);
}
Tensor exp(const Tensor& a) { return unary_float(Op::exp, a); }
Tensor expm1(const Tensor& a) { return unary_float(Op::expm1, a); }
Tensor log(const Tensor& a) { return unary_float(Op::log, a); }
Tensor log1p(const Tensor& a) { return unary_float(Op::log1p, a); }
Tensor sqrt(const Tensor& a) { return unary_float(Op::sqrt, a); }
Tensor rsqrt(const Tensor& a) { return unary_float(Op::rsqrt, a); }
Tensor sin(const Tensor& a) { return unary_float(Op::sin, a); }
Tensor cos(const Tensor& a) { return unary_float(Op::cos, a); }
Tensor tanh(const Tensor& a) { return unary_float(Op::tanh, a); }
Tensor sigmoid(const Tensor& a) { return unary_float(Op::sigmoid, a); }
Tensor relu(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool, "relu: not supported for bool tensors");
  return unary_same(Op::relu, a);
}
Tensor gelu(const Tensor& a, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
  EMBER_CHECK_TYPE(is_floating_point(a.dtype()), "gelu: expected a floating-point tensor, got {}",
                   to_string(a.dtype()));
  return unary_same(approximate == "none" ? Op::gelu : Op::gelu_tanh, a);
}
Tensor silu(const Tensor& a) {
  EMBER_CHECK_TYPE(is_floating_point(a.dtype()), "silu: expected a floating-point tensor, got {}",
                   to_string(a.dtype()));
  return unary_same(Op::silu, a);
}
Tensor erf(const Tensor& a) { return unary_float(Op::erf, a); }
Tensor sign(const Tensor& a) {
  if (a.dtype() == kBool) return a.clone();
  return unary_same(Op::sign, a);
}
// Rounding an integer is the identity (PyTorch returns a copy).
Tensor floor(const Tensor& a) { return is_floating_point(a.dtype()) ? unary_same(Op::floor, a) : a.clone(); }
Tensor ceil(const Tensor& a) { return is_floating_point(a.dtype()) ? unary_same(Op::ceil, a) : a.clone(); }
Tensor round(const Tensor& a) { return is_floating_point(a.dtype()) ? unary_same(Op::round, a) : a.clone(); }
Tensor trunc(const Tensor& a) { return is_floating_point(a.dtype()) ? unary_same(Op::trunc, a) : a.clone(); }
Tensor reciprocal(const Tensor& a) { return unary_float(Op::reciprocal, a); }
Tensor square(const Tensor& a) { return mul(a, a); }

// ---- in-place ----
Tensor& add_(Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (!(alpha.is_integral() && alpha.to_long() == 1)) return add_(a, mul(b, alpha));
  return binary_inplace(Op::add, a, b, result_type(a, b));
}
Tensor& mul_(Tensor& a, const Tensor& b) { return binary_inplace(Op::mul, a, b, result_type(a, b)); }

namespace detail {
Tensor& binary_inplace_op(Op op, Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  if (op == Op::div) dt = float_result(dt);
  if (op == Op::sub) check_not_bool_sub(a, b.dtype());
  return binary_inplace(op, a, b, dt);
}
Tensor& binary_inplace_op(Op op, Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  if (op == Op::div) dt = float_result(dt);
  return binary_inplace(op, a, wrap(b, dt), dt);
}
Tensor& unary_inplace_op(Op op, Tensor& a) { return unary_inplace(op, a); }
}  // namespace detail

}  // namespace ember

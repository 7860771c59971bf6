// torch's pointwise math beyond elementwise.cpp's core set: inverse and
// hyperbolic trig, log2/log10/exp2, the special functions, atan2, fmod,
// hypot, copysign, nextafter, the shifts, and the composites (logaddexp,
// xlogy, float_power, fmax/fmin, nan_to_num, logit, sinc, isclose, isin,
// div's rounding modes, round's decimals, clamp's tensor bounds). Each
// forward has its derivative beside it, one formula per input.
#include <cmath>
#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/kernel_types.h"
#include "kernels/tensor_iter.h"
#include "ops/elementwise_kernel.h"
#include "ops/grad_utils.h"
#include "ops/trace_util.h"

namespace ember {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.693147180559945309417;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double k2InvSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi)
constexpr double kSqrtPiOver2 = 0.88622692545275801365;  // sqrt(pi) / 2
constexpr double kInf = std::numeric_limits<double>::infinity();

ScalarType float_result(ScalarType t) { return is_floating_point(t) ? t : kDefaultFloat; }

// A float function of one input (integer and bool inputs give the default
// float dtype); derivative(g, x, y) is its gradient.
template <typename F>
Tensor float_unary(Op op, const char* node, const Tensor& a, F derivative) {
  Tensor out = detail::unary_kernel_op(op, a, float_result(a.dtype()));
  if (any_requires_grad({&a})) {
    SavedTensor sa = save(a), so = save_output(out);
    record(node, {&a}, {sa, so}, out, [sa, so, derivative](const variable_list& g) -> variable_list {
      return {derivative(g[0], sa.unpack(), so.unpack())};
    });
  }
  return out;
}

// A binary op computed in dtype dt; derivative(g, a, b, y) returns the
// gradients of a and b before they are summed back to the inputs' shapes.
template <typename F>
Tensor binary_with_grad(Op op, const char* node, const Tensor& a, const Tensor& b, ScalarType dt, F derivative) {
  Tensor out = detail::binary_kernel_op(op, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b), so = save_output(out);
    record(node, {&a, &b}, {sa, sb, so}, out,
           [sa, sb, so, derivative, ga = GradTarget(a, out), gb = GradTarget(b, out)](
               const variable_list& g) -> variable_list {
             auto [da, db] = derivative(g[0], sa.unpack(), sb.unpack(), so.unpack());
             return {ga(da), gb(db)};
           });
  }
  return out;
}

// Integer-valued results (div with a rounding mode): zero gradient, like
// PyTorch, but the output still carries a node so backward reaches the inputs.
Tensor with_zero_grad(const char* node, const Tensor& a, const Tensor& b, Tensor out) {
  if (any_requires_grad({&a, &b}))
    record(node, {&a, &b}, out,
           [ga = GradTarget(a, out), gb = GradTarget(b, out)](const variable_list& g) -> variable_list {
             Tensor z = zeros_like(g[0]);
             return {ga(z), gb(z)};
           });
  return out;
}

void check_floating(ScalarType dt, const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_TYPE(is_floating_point(dt), "{}: expected floating-point inputs, got {} and {}", op,
                   to_string(a.dtype()), to_string(b.dtype()));
}

Tensor wrap(const Scalar& s, ScalarType dt) { return scalar_tensor(s, dt); }

}  // namespace

// ---- unary math kernels ----
Tensor tan(const Tensor& a) {
  return float_unary(Op::tan, "TanBackward0", a, [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * (y * y + 1);
  });
}
Tensor asin(const Tensor& a) {
  return float_unary(Op::asin, "AsinBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * rsqrt(1 - x * x);
  });
}
Tensor acos(const Tensor& a) {
  return float_unary(Op::acos, "AcosBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return neg(g) * rsqrt(1 - x * x);
  });
}
Tensor atan(const Tensor& a) {
  return float_unary(Op::atan, "AtanBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g / (x * x + 1);
  });
}
Tensor sinh(const Tensor& a) {
  return float_unary(Op::sinh, "SinhBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * cosh(x);
  });
}
Tensor cosh(const Tensor& a) {
  return float_unary(Op::cosh, "CoshBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * sinh(x);
  });
}
Tensor asinh(const Tensor& a) {
  return float_unary(Op::asinh, "AsinhBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * rsqrt(x * x + 1);
  });
}
Tensor acosh(const Tensor& a) {
  return float_unary(Op::acosh, "AcoshBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * rsqrt(x * x - 1);
  });
}
Tensor atanh(const Tensor& a) {
  return float_unary(Op::atanh, "AtanhBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g / (1 - x * x);
  });
}
Tensor log2(const Tensor& a) {
  return float_unary(Op::log2, "Log2Backward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g / (x * kLn2);
  });
}
Tensor log10(const Tensor& a) {
  return float_unary(Op::log10, "Log10Backward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g / (x * kLn10);
  });
}
Tensor exp2(const Tensor& a) {
  return float_unary(Op::exp2, "Exp2Backward0", a, [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * y * kLn2;
  });
}
Tensor erfc(const Tensor& a) {
  return float_unary(Op::erfc, "ErfcBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * exp(neg(x * x)) * -k2InvSqrtPi;
  });
}
Tensor erfinv(const Tensor& a) {
  return float_unary(Op::erfinv, "ErfinvBackward0", a, [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * exp(y * y) * kSqrtPiOver2;
  });
}
Tensor lgamma(const Tensor& a) {
  return float_unary(Op::lgamma, "LgammaBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * digamma(x);
  });
}
namespace {

// polygamma(2, z) for z >= 1/2 from differentiable ops: ten steps of the
// recurrence psi''(z) = psi''(z + 1) - 2 / z^3, then the asymptotic series
// -1/z^2 - 1/z^3 - sum_k (2k + 1) B_2k / z^(2k + 2), k = 1..5; at z >= 10.5
// the first omitted term is below 2e-12 of the value.
Tensor tetragamma_from_half(const Tensor& z) {
  Tensor acc = zeros_like(z);
  Tensor w = z;
  for (int i = 0; i < 10; ++i) {
    acc = acc - 2.0 / (w * w * w);
    w = w + 1.0;
  }
  Tensor iw = 1.0 / w, iw2 = iw * iw;
  // Horner in 1/w^2: -(1 + 1/(2w^2) - 1/(6w^4) + 1/(6w^6) - 3/(10w^8) + 5/(6w^10)) / w^2 - 1/w^3.
  Tensor series = 1.0 + iw2 * (0.5 + iw2 * (-1.0 / 6 + iw2 * (1.0 / 6 + iw2 * (-0.3 + iw2 * (5.0 / 6)))));
  return acc - series * iw2 - iw2 * iw;
}

// polygamma(2, x) for any x: the reflection psi''(x) = psi''(1 - x) -
// 2 pi^3 cos(pi x) / sin^3(pi x) below 1/2. Both branches see only inputs
// where they are finite, so where()'s unused side adds no NaN to gradients.
Tensor tetragamma(const Tensor& x) {
  Tensor reflect = lt(x, 0.5);
  Tensor z = where(reflect, rsub(x, 1.0), x);
  Tensor xr = where(reflect, x, 0.25);
  Tensor s = sin(xr * kPi);
  Tensor pole = where(reflect, -2.0 * kPi * kPi * kPi * cos(xr * kPi) / (s * s * s), 0.0);
  return tetragamma_from_half(z) + pole;
}

// polygamma(1, x), digamma's derivative, with its own derivative (above), so
// that digamma is twice differentiable.
Tensor trigamma(const Tensor& a) {
  return float_unary(Op::trigamma, "PolygammaBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * tetragamma(x);
  });
}

}  // namespace

Tensor digamma(const Tensor& a) {
  return float_unary(Op::digamma, "DigammaBackward0", a, [](const Tensor& g, const Tensor& x, const Tensor&) {
    return g * trigamma(x);
  });
}

Tensor signbit(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool, "signbit: not supported for bool tensors");
  Tensor out = empty(a.sizes(), TensorOptions(kBool).device(a.device()));
  TensorIter iter({&out, &a}, 1, "signbit");
  run_elementwise(Op::signbit, iter, {}, a.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(Op::signbit, out, &a);
  return out;
}

// ---- unary composites ----
Tensor deg2rad(const Tensor& a) { return mul(a, 0.017453292519943295769236907684886127134428718885417); }
Tensor rad2deg(const Tensor& a) { return mul(a, 57.295779513082320876798154814105170332405472466564); }
Tensor frac(const Tensor& a) {
  EMBER_CHECK_TYPE(is_floating_point(a.dtype()), "frac: expected a floating-point tensor, got {}",
                   to_string(a.dtype()));
  return sub(a, trunc(a));
}
namespace {

// sinc'(x) = (cos(pi x) - sinc(x)) / x, and below |x| = 0.1 its Taylor
// series sum_k (-1)^k 2k pi^2k x^(2k-1) / (2k+1)!, k = 1..5 (the next term is
// below 1e-13 of the value): the division cancels badly near 0 in float32,
// and the series carries the second derivative at 0, -pi^2/3 (PyTorch's
// formula, masked to 0 at 0, gives NaN there).
Tensor sinc_derivative(const Tensor& x) {
  Tensor small = lt(abs(x), 0.1);
  Tensor far_x = where(small, 1.0, x);  // the division only sees |x| >= 0.1
  Tensor far = (cos(far_x * kPi) - sinc(far_x)) / far_x;
  const double p2 = kPi * kPi;
  Tensor near_x = where(small, x, 0.0), x2 = near_x * near_x;
  // -p2/3 + p2^2 x^2/30 - p2^3 x^4/840 + p2^4 x^6/45360 - p2^5 x^8/3991680, times x.
  Tensor series =
      -p2 / 3 + x2 * (p2 * p2 / 30 + x2 * (-p2 * p2 * p2 / 840 + x2 * (p2 * p2 * p2 * p2 / 45360 +
                                                                       x2 * (-p2 * p2 * p2 * p2 * p2 / 3991680))));
  // + 0.0: at x = 0 the series gives -0.0; PyTorch's gradient there is +0.0.
  return where(small, series * near_x + 0.0, far);
}

}  // namespace

// sin(pi x) / (pi x), 1 at x == 0 (the masked denominator); the gradient is
// sinc_derivative's, recorded as one node.
Tensor sinc(const Tensor& a) {
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor zero = eq(a, 0);
    Tensor px = where(zero, 1.0, mul(a, kPi));
    out = where(zero, 1.0, div(sin(px), px));
  }
  if (any_requires_grad({&a})) {
    SavedTensor sa = save(a);
    record("SincBackward0", {&a}, {sa}, out, [sa](const variable_list& g) -> variable_list {
      return {g[0] * sinc_derivative(sa.unpack())};
    });
  }
  return out;
}
Tensor sgn(const Tensor& a) { return sign(a); }

Tensor logit(const Tensor& a, std::optional<double> eps) {
  // Integers become floating point first: 1 - x must not wrap in uint8.
  const Tensor f = is_floating_point(a.dtype()) ? a : a.to(kDefaultFloat);
  Tensor x = eps ? clamp(f, *eps, 1 - *eps) : f;
  return log(div(x, rsub(x, 1)));
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!is_floating_point(a.dtype())) return a.clone();
  double hi;
  switch (a.dtype()) {
    case kFloat16: hi = 65504.0; break;
    case kBFloat16: hi = 3.3895313892515355e+38; break;
    case kFloat32: hi = std::numeric_limits<float>::max(); break;
    default: hi = std::numeric_limits<double>::max(); break;
  }
  Tensor r = where(isnan(a), nan.value_or(0.0), a);
  r = where(eq(a, kInf), posinf.value_or(hi), r);
  return where(eq(a, -kInf), neginf.value_or(-hi), r);
}

Tensor round(const Tensor& a, int64_t decimals) {
  if (decimals == 0 || !is_floating_point(a.dtype())) return round(a);
  // PyTorch's order of operations: scale, round half to even, unscale.
  double p = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? div(round(mul(a, p)), p) : mul(round(div(a, p)), p);
}

// ---- binary math kernels ----
Tensor atan2(const Tensor& a, const Tensor& b) {
  return binary_with_grad(Op::atan2, "Atan2Backward0", a, b, float_result(result_type(a, b)),
                          [](const Tensor& g, const Tensor& x, const Tensor& y, const Tensor&) {
                            Tensor r = g / (x * x + y * y);
                            return std::pair{r * y, neg(r) * x};
                          });
}
Tensor hypot(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  check_floating(dt, "hypot", a, b);
  return binary_with_grad(Op::hypot, "HypotBackward0", a, b, dt,
                          [](const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& r) {
                            return std::pair{g * x / r, g * y / r};
                          });
}
// d/da copysign(a, b) = result / a (0 where a == 0); nothing flows to b.
Tensor copysign(const Tensor& a, const Tensor& b) {
  return binary_with_grad(Op::copysign, "CopysignBackward0", a, b, float_result(result_type(a, b)),
                          [](const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& r) {
                            Tensor ratio = where(eq(x, 0), 0.0, div(r, x));
                            return std::pair{g * ratio, zeros_like(y)};
                          });
}
Tensor copysign(const Tensor& a, const Scalar& b) {
  return copysign(a, wrap(b, float_result(result_type(a, b))));
}
// Not differentiable (PyTorch implements no derivative either).
Tensor nextafter(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt == kFloat32 || dt == kFloat64, "nextafter: expected float32 or float64 inputs, got {} and {}",
                   to_string(a.dtype()), to_string(b.dtype()));
  return detail::binary_kernel_op(Op::nextafter, a, b, dt, dt);
}
// d/db fmod(a, b) = -trunc(a / b).
Tensor fmod(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "fmod: not supported for bool tensors");
  return binary_with_grad(Op::fmod, "FmodBackward0", a, b, dt,
                          [](const Tensor& g, const Tensor& x, const Tensor& y, const Tensor&) {
                            return std::pair{g, neg(g) * trunc(div(x, y))};
                          });
}
Tensor fmod(const Tensor& a, const Scalar& b) { return fmod(a, wrap(b, result_type(a, b))); }

namespace {
Tensor shift(Op op, const char* name, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(is_integral(dt, false), "{}: only integer tensors are supported, got {} and {}", name,
                   to_string(a.dtype()), to_string(b.dtype()));
  return detail::binary_kernel_op(op, a, b, dt, dt);
}
}  // namespace
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) {
  return shift(Op::bitwise_left_shift, "bitwise_left_shift", a, b);
}
Tensor bitwise_left_shift(const Tensor& a, const Scalar& b) {
  return bitwise_left_shift(a, wrap(b, result_type(a, b)));
}
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) {
  return shift(Op::bitwise_right_shift, "bitwise_right_shift", a, b);
}
Tensor bitwise_right_shift(const Tensor& a, const Scalar& b) {
  return bitwise_right_shift(a, wrap(b, result_type(a, b)));
}

// ---- binary composites ----
namespace {
// max(a, b) + log(1 + base^-|a - b|) / log(base); equal infinities give
// themselves (their difference would be NaN).
Tensor log_add_exp(const Tensor& a, const Tensor& b, bool base2, const char* name) {
  check_floating(result_type(a, b), name, a, b);
  Tensor same_inf = logical_and(eq(a, b), eq(abs(a), kInf));
  Tensor d = abs(where(same_inf, 0.0, sub(a, b)));
  Tensor tail = base2 ? div(log1p(exp2(neg(d))), kLn2) : log1p(exp(neg(d)));
  return where(same_inf, a, add(maximum(a, b), tail));
}
}  // namespace
Tensor logaddexp(const Tensor& a, const Tensor& b) { return log_add_exp(a, b, false, "logaddexp"); }
Tensor logaddexp2(const Tensor& a, const Tensor& b) { return log_add_exp(a, b, true, "logaddexp2"); }

// x * log(y), 0 where x == 0, NaN where y is NaN.
Tensor xlogy(const Tensor& a, const Tensor& b) {
  Tensor r = where(eq(a, 0), 0.0, mul(a, log(b)));
  return where(isnan(b), std::numeric_limits<double>::quiet_NaN(), r);
}
Tensor xlogy(const Tensor& a, const Scalar& b) { return xlogy(a, wrap(b, float_result(result_type(a, b)))); }
Tensor xlogy(const Scalar& a, const Tensor& b) { return xlogy(wrap(a, float_result(result_type(b, a))), b); }

// pow in float64 whatever the inputs.
Tensor float_power(const Tensor& a, const Tensor& e) { return pow(a.to(kFloat64), e.to(kFloat64)); }
Tensor float_power(const Tensor& a, const Scalar& e) { return pow(a.to(kFloat64), e); }
Tensor float_power(const Scalar& a, const Tensor& e) { return pow(a, e.to(kFloat64)); }

namespace {
// fmax/fmin: NaN loses to a number. The gradient goes to self on ties and
// where other is NaN (PyTorch's formula).
Tensor fextreme(bool is_max, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  if (dt == kBool) return is_max ? maximum(a, b) : minimum(a, b);  // no NaN among bools
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor a2 = a.to(dt), b2 = b.to(dt);
    Tensor m = is_max ? maximum(a2, b2) : minimum(a2, b2);
    out = where(isnan(b2), a2, where(isnan(a2), b2, m));
  }
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    record(is_max ? "FmaxBackward0" : "FminBackward0", {&a, &b}, {sa, sb}, out,
           [sa, sb, is_max, ga = GradTarget(a, out), gb = GradTarget(b, out)](const variable_list& g)
               -> variable_list {
             Tensor x = sa.unpack(), y = sb.unpack();
             Tensor to_self = logical_or(is_max ? ge(x, y) : le(x, y), isnan(y));
             Tensor zero = zeros({}, g[0].dtype());
             return {ga(where(to_self, g[0], zero)), gb(where(to_self, zero, g[0]))};
           });
  }
  return out;
}
}  // namespace
Tensor fmax(const Tensor& a, const Tensor& b) { return fextreme(true, a, b); }
Tensor fmin(const Tensor& a, const Tensor& b) { return fextreme(false, a, b); }

// rounding_mode: none (true division), "trunc" or "floor" (zero gradient).
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  EMBER_CHECK(*rounding_mode == "trunc" || *rounding_mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'", *rounding_mode);
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "div: rounding_mode '{}' is not supported for bool tensors", *rounding_mode);
  Tensor out;
  {
    NoGradGuard no_grad;
    if (*rounding_mode == "floor") {
      out = floor_divide(a, b);
    } else if (is_floating_point(dt)) {
      out = trunc(div(a, b));
    } else {
      // Truncation toward zero: |a| // |b| carries the sign of a * b.
      Tensor a2 = a.to(dt), b2 = b.to(dt);
      out = mul(mul(sign(a2), sign(b2)), floor_divide(abs(a2), abs(b2)));
    }
  }
  return with_zero_grad("DivBackward0", a, b, out);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  ScalarType dt = rounding_mode ? result_type(a, b) : float_result(result_type(a, b));
  return div(a, wrap(b, dt), rounding_mode);
}

// Bounds broadcast with a; NaN in a or a bound propagates.
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  EMBER_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  Tensor r = a;
  if (min) r = maximum(r, *min);
  if (max) r = minimum(r, *max);
  return r;
}
Tensor clamp_min(const Tensor& a, const Tensor& min) { return clamp(a, min, std::nullopt); }
Tensor clamp_max(const Tensor& a, const Tensor& max) { return clamp(a, std::nullopt, max); }

// ---- predicates (bool results, not differentiable) ----
Tensor isinf(const Tensor& a) {
  if (!is_floating_point(a.dtype())) return zeros(a.sizes(), TensorOptions(kBool).device(a.device()));
  return eq(abs(a), kInf);
}
Tensor isposinf(const Tensor& a) {
  if (!is_floating_point(a.dtype())) return zeros(a.sizes(), TensorOptions(kBool).device(a.device()));
  return eq(a, kInf);
}
Tensor isneginf(const Tensor& a) {
  if (!is_floating_point(a.dtype())) return zeros(a.sizes(), TensorOptions(kBool).device(a.device()));
  return eq(a, -kInf);
}

// |a - b| <= atol + rtol * |b| where finite, or a == b (equal infinities), or
// both NaN when equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK_TYPE(a.dtype() == b.dtype(), "isclose: expected a and b to have the same dtype, got {} and {}",
                   to_string(a.dtype()), to_string(b.dtype()));
  EMBER_CHECK(rtol >= 0, "isclose: rtol must be greater than or equal to zero, but got {}", rtol);
  EMBER_CHECK(atol >= 0, "isclose: atol must be greater than or equal to zero, but got {}", atol);
  NoGradGuard no_grad;
  Tensor close = eq(a, b);
  if (equal_nan && is_floating_point(a.dtype())) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol == 0 && atol == 0) return close;
  ScalarType dt = float_result(a.dtype());
  Tensor a2 = a.to(dt), b2 = b.to(dt);
  Tensor allowed = add(abs(mul(b2, rtol)), atol);
  Tensor actual = abs(sub(a2, b2));
  return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
}

// Each element of `elements` tested against every element of test_elements.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique, bool invert) {
  (void)assume_unique;  // only a speed hint in PyTorch
  NoGradGuard no_grad;
  Tensor hits = eq(elements.reshape({elements.numel(), 1}), test_elements.reshape({1, test_elements.numel()}));
  Tensor found = any(hits, {1}).reshape(elements.sizes());
  return invert ? logical_not(found) : found;
}
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  return isin(elements, scalar_tensor(test_element, result_type(elements, test_element)), assume_unique, invert);
}
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  return isin(scalar_tensor(element, result_type(test_elements, element)), test_elements, assume_unique, invert);
}

}  // namespace ember

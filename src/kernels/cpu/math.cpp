// Pointwise math kernels beyond basic arithmetic: inverse and hyperbolic
// trig, log2/log10/exp2, the special functions (erfc, erfinv, lgamma,
// digamma, trigamma), signbit, and the binary atan2, fmod, hypot, copysign,
// nextafter and bit shifts. Scalar formulas in opmath precision; the special
// functions follow PyTorch's (ATen/native/Math.h) so values agree to the ulp.
#include <bit>
#include <climits>
#include <cstdint>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kernels/cpu/loops.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_types.h"

namespace ember {
namespace {

template <typename F>
void unary_floating(const TensorIter& it, const char* name, const F& f) {
  dispatch_floating(it.dtype(0), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [&](T a) -> T { return static_cast<T>(f(static_cast<M>(a))); });
  });
}

template <typename F>
void binary_floating(const TensorIter& it, const char* name, const F& f) {
  dispatch_floating(it.dtype(0), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [&](T a, T b) -> T { return static_cast<T>(f(static_cast<M>(a), static_cast<M>(b))); });
  });
}

// erfinv: a rational first guess (Giles, "Approximating the erfinv function",
// GPU Computing Gems 2011) refined by two Newton steps on erf(x) - y, which
// takes it to full double precision.
template <typename M>
M erfinv_scalar(M y) {
  if (y != y || y < -1 || y > 1) return std::numeric_limits<M>::quiet_NaN();
  if (y == 1) return std::numeric_limits<M>::infinity();
  if (y == -1) return -std::numeric_limits<M>::infinity();
  double yd = static_cast<double>(y);
  double w = -std::log((1.0 - yd) * (1.0 + yd)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * yd;
  constexpr double k2OverSqrtPi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - yd) / (k2OverSqrtPi * std::exp(-x * x));
  return static_cast<M>(x);
}

// PyTorch's calc_digamma: reflection for x < 0, recurrence up to x >= 10,
// then the asymptotic series.
double digamma_scalar(double x) {
  constexpr double kPsi10 = 2.25175258906672110764;
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
    double q;
    double r = std::modf(x, &q);
    return digamma_scalar(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * r);
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + kPsi10;
  static constexpr double A[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                                 -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                 8.33333333333333333333E-2};
  double y = 0;
  if (x < 1.0e17) {
    double z = 1.0 / (x * x);
    double poly = A[0];
    for (int i = 1; i < 7; ++i) poly = poly * z + A[i];
    y = z * poly;
  }
  return result + std::log(x) - (0.5 / x) - y;
}

// PyTorch's calc_trigamma (polygamma(1, x)): reflection below 1/2, six
// recurrence steps, then the asymptotic series.
double trigamma_scalar(double x) {
  double sign = 1, result = 0;
  if (x < 0.5) {
    sign = -1;
    double s = std::sin(std::numbers::pi * x);
    result -= (std::numbers::pi * std::numbers::pi) / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += 1 / (x * x);
    x += 1;
  }
  double ixx = 1 / (x * x);
  result += (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x;
  return sign * result;
}

// glibc's lgamma writes the global signgam; the _r forms are thread-safe.
double lgamma_scalar(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}
float lgamma_scalar(float x) {
  int sign;
  return ::lgammaf_r(x, &sign);
}

#define EMBER_MATH_UNARY(name, expr)                                                       \
  void name##_kernel(const TensorIter& it, const ElementwiseParams&) {                     \
    unary_floating(it, #name, [](auto x) -> decltype(x) { return expr; });                \
  }                                                                                        \
  EMBER_REGISTER_KERNEL(name, CPU, name##_kernel);

EMBER_MATH_UNARY(tan, std::tan(x))
EMBER_MATH_UNARY(asin, std::asin(x))
EMBER_MATH_UNARY(acos, std::acos(x))
EMBER_MATH_UNARY(atan, std::atan(x))
EMBER_MATH_UNARY(sinh, std::sinh(x))
EMBER_MATH_UNARY(cosh, std::cosh(x))
EMBER_MATH_UNARY(asinh, std::asinh(x))
EMBER_MATH_UNARY(acosh, std::acosh(x))
EMBER_MATH_UNARY(atanh, std::atanh(x))
EMBER_MATH_UNARY(log2, std::log2(x))
EMBER_MATH_UNARY(log10, std::log10(x))
EMBER_MATH_UNARY(exp2, std::exp2(x))
EMBER_MATH_UNARY(erfc, std::erfc(x))
EMBER_MATH_UNARY(erfinv, erfinv_scalar(x))
EMBER_MATH_UNARY(lgamma, lgamma_scalar(x))
EMBER_MATH_UNARY(digamma, static_cast<decltype(x)>(digamma_scalar(static_cast<double>(x))))
EMBER_MATH_UNARY(trigamma, static_cast<decltype(x)>(trigamma_scalar(static_cast<double>(x))))
#undef EMBER_MATH_UNARY

// Operands: out (bool), a (any dtype). True for -0.0 and negative NaNs too.
void signbit_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_numeric(it.dtype(1), "signbit", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_unsigned_v<T>)
      cpu_kernel(it, [](T) -> bool { return false; });
    else if constexpr (std::is_integral_v<T>)
      cpu_kernel(it, [](T a) -> bool { return a < 0; });
    else if constexpr (std::is_same_v<T, double>)
      cpu_kernel(it, [](T a) -> bool { return std::bit_cast<int64_t>(static_cast<double>(a)) < 0; });
    else  // std::signbit on float here crashes GCC 12's vectorizer (an ICE at -O3)
      cpu_kernel(it, [](T a) -> bool { return std::bit_cast<int32_t>(static_cast<float>(a)) < 0; });
  });
}
EMBER_REGISTER_KERNEL(signbit, CPU, signbit_kernel);

void atan2_kernel(const TensorIter& it, const ElementwiseParams&) {
  binary_floating(it, "atan2", [](auto a, auto b) { return std::atan2(a, b); });
}
void hypot_kernel(const TensorIter& it, const ElementwiseParams&) {
  binary_floating(it, "hypot", [](auto a, auto b) { return std::hypot(a, b); });
}
void copysign_kernel(const TensorIter& it, const ElementwiseParams&) {
  binary_floating(it, "copysign", [](auto a, auto b) { return std::copysign(a, b); });
}
// In the operands' own dtype (a float32 step is a float32 ulp).
void nextafter_kernel(const TensorIter& it, const ElementwiseParams&) {
  switch (it.dtype(0)) {
    case kFloat32: return cpu_kernel(it, [](float a, float b) -> float { return std::nextafter(a, b); });
    case kFloat64: return cpu_kernel(it, [](double a, double b) -> double { return std::nextafter(a, b); });
    default: throw_unsupported_dtype("nextafter", it.dtype(0), "float32 or float64");
  }
}

// C's fmod: the result has the sign of the dividend.
void fmod_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_numeric(it.dtype(0), "fmod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(it, [](T a, T b) -> T {
        EMBER_CHECK(b != 0, "fmod: ZeroDivisionError (integer modulo by zero)");
        if constexpr (std::is_signed_v<T>)
          if (b == -1) return 0;  // INT_MIN % -1 overflows in C
        return static_cast<T>(a % b);
      });
    } else {
      cpu_kernel(it, [](T a, T b) -> T { return static_cast<T>(std::fmod(static_cast<M>(a), static_cast<M>(b))); });
    }
  });
}

// PyTorch's shifts: a count outside [0, bits) gives 0 (left) or the sign
// fill (right) instead of C's undefined behaviour.
void bitwise_left_shift_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_integral(it.dtype(0), "bitwise_left_shift", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw_unsupported_dtype("bitwise_left_shift", kBool, "an integer dtype");
    } else {
      cpu_kernel(it, [](T a, T b) -> T {
        constexpr T bits = sizeof(T) * CHAR_BIT;
        if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= bits) return 0;
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
      });
    }
  });
}
void bitwise_right_shift_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_integral(it.dtype(0), "bitwise_right_shift", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw_unsupported_dtype("bitwise_right_shift", kBool, "an integer dtype");
    } else {
      cpu_kernel(it, [](T a, T b) -> T {
        constexpr T max_shift = sizeof(T) * CHAR_BIT - std::is_signed_v<T>;
        if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= max_shift) return static_cast<T>(a >> max_shift);
        return static_cast<T>(a >> b);
      });
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(atan2, CPU, atan2_kernel);
EMBER_REGISTER_KERNEL(hypot, CPU, hypot_kernel);
EMBER_REGISTER_KERNEL(copysign, CPU, copysign_kernel);
EMBER_REGISTER_KERNEL(nextafter, CPU, nextafter_kernel);
EMBER_REGISTER_KERNEL(fmod, CPU, fmod_kernel);
EMBER_REGISTER_KERNEL(bitwise_left_shift, CPU, bitwise_left_shift_kernel);
EMBER_REGISTER_KERNEL(bitwise_right_shift, CPU, bitwise_right_shift_kernel);

}  // namespace ember

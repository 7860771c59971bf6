// Comparison, logical and bitwise kernels, isnan, where and clamp.
#include <cmath>

#include "kernels/cpu/loops.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_types.h"

namespace ember {
namespace {

// Inputs share a dtype; the output is bool.
template <typename F>
void compare(const TensorIter& it, const char* name, const F& f) {
  dispatch_all(it.dtype(1), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [&](T a, T b) -> bool { return f(static_cast<M>(a), static_cast<M>(b)); });
  });
}

#define EMBER_COMPARE(name, expr)                                      \
  void name##_kernel(const TensorIter& it, const ElementwiseParams&) { \
    compare(it, #name, [](auto a, auto b) { return expr; });           \
  }                                                                    \
  EMBER_REGISTER_KERNEL(name, CPU, name##_kernel);

EMBER_COMPARE(eq, a == b)
EMBER_COMPARE(ne, a != b)
EMBER_COMPARE(lt, a < b)
EMBER_COMPARE(le, a <= b)
EMBER_COMPARE(gt, a > b)
EMBER_COMPARE(ge, a >= b)
#undef EMBER_COMPARE

// Logical ops receive bool inputs (the op converts truthiness).
void logical_and_kernel(const TensorIter& it, const ElementwiseParams&) {
  cpu_kernel(it, [](bool a, bool b) -> bool { return a && b; });
}
void logical_or_kernel(const TensorIter& it, const ElementwiseParams&) {
  cpu_kernel(it, [](bool a, bool b) -> bool { return a || b; });
}
void logical_xor_kernel(const TensorIter& it, const ElementwiseParams&) {
  cpu_kernel(it, [](bool a, bool b) -> bool { return a != b; });
}
void logical_not_kernel(const TensorIter& it, const ElementwiseParams&) {
  cpu_kernel(it, [](bool a) -> bool { return !a; });
}
EMBER_REGISTER_KERNEL(logical_and, CPU, logical_and_kernel);
EMBER_REGISTER_KERNEL(logical_or, CPU, logical_or_kernel);
EMBER_REGISTER_KERNEL(logical_xor, CPU, logical_xor_kernel);
EMBER_REGISTER_KERNEL(logical_not, CPU, logical_not_kernel);

template <typename F>
void bitwise(const TensorIter& it, const char* name, const F& f) {
  dispatch_integral(it.dtype(0), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(it, [&](T a, T b) -> T { return static_cast<T>(f(a, b)); });
  });
}
void bitwise_and_kernel(const TensorIter& it, const ElementwiseParams&) {
  bitwise(it, "bitwise_and", [](auto a, auto b) { return a & b; });
}
void bitwise_or_kernel(const TensorIter& it, const ElementwiseParams&) {
  bitwise(it, "bitwise_or", [](auto a, auto b) { return a | b; });
}
void bitwise_xor_kernel(const TensorIter& it, const ElementwiseParams&) {
  bitwise(it, "bitwise_xor", [](auto a, auto b) { return a ^ b; });
}
void bitwise_not_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_integral(it.dtype(0), "bitwise_not", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      cpu_kernel(it, [](bool a) -> bool { return !a; });
    else
      cpu_kernel(it, [](T a) -> T { return static_cast<T>(~a); });
  });
}
EMBER_REGISTER_KERNEL(bitwise_and, CPU, bitwise_and_kernel);
EMBER_REGISTER_KERNEL(bitwise_or, CPU, bitwise_or_kernel);
EMBER_REGISTER_KERNEL(bitwise_xor, CPU, bitwise_xor_kernel);
EMBER_REGISTER_KERNEL(bitwise_not, CPU, bitwise_not_kernel);

void isnan_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_all(it.dtype(1), "isnan", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [](T a) -> bool { return static_cast<M>(a) != static_cast<M>(a); });
  });
}
EMBER_REGISTER_KERNEL(isnan, CPU, isnan_kernel);

// Operands: out, cond (bool), a, b.
void where_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_all(it.dtype(0), "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(it, [](bool c, T a, T b) -> T { return c ? a : b; });
  });
}
EMBER_REGISTER_KERNEL(where, CPU, where_kernel);

// Operands: out, grad, self; params.a = threshold. NaN in self passes grad
// (NaN <= t is false), as in PyTorch.
void threshold_backward_kernel(const TensorIter& it, const ElementwiseParams& p) {
  dispatch_numeric(it.dtype(0), "threshold_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T t = p.a->to<T>();
    cpu_kernel(it, [t](T g, T x) -> T { return x <= t ? T(0) : g; });
  });
}
EMBER_REGISTER_KERNEL(threshold_backward, CPU, threshold_backward_kernel);

// params.a = min, params.b = max (either may be absent). NaN stays NaN.
void clamp_kernel(const TensorIter& it, const ElementwiseParams& p) {
  dispatch_numeric(it.dtype(0), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const bool has_lo = p.a.has_value(), has_hi = p.b.has_value();
    const M lo = has_lo ? p.a->to<M>() : M(0), hi = has_hi ? p.b->to<M>() : M(0);
    cpu_kernel(it, [=](T a) -> T {
      M v = static_cast<M>(a);
      if (has_lo && v < lo) v = lo;
      if (has_hi && v > hi) v = hi;
      return static_cast<T>(v);
    });
  });
}
EMBER_REGISTER_KERNEL(clamp, CPU, clamp_kernel);

}  // namespace
}  // namespace ember

// Binary arithmetic kernels: add, sub, mul, div, floor_divide, remainder,
// pow, maximum, minimum. Operands arrive already promoted to one dtype.
#include <cmath>
#include <functional>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/dispatch.h"
#include "kernels/flat_binary.h"
#include "kernels/kernel_types.h"
#include "kernels/wrapping.h"

namespace ember {
namespace {

// float32 with unit/zero strides goes to the Highway loop; everything else to
// the scalar lambda.
template <typename F>
void arith(const TensorIter& iter, const char* name, std::optional<vec::Binary> vop, const F& op) {
  if (vop && iter.dtype(0) == kFloat32) {
    iter.for_each([&](char** d, const int64_t* s, int64_t n) {
      auto* out = reinterpret_cast<float*>(d[0]);
      auto* a = reinterpret_cast<const float*>(d[1]);
      auto* b = reinterpret_cast<const float*>(d[2]);
      if (n < 8) {  // too short for a vector: skip the dispatch
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<float*>(d[0] + k * s[0]) =
              op(*reinterpret_cast<const float*>(d[1] + k * s[1]), *reinterpret_cast<const float*>(d[2] + k * s[2]));
        return;
      }
      if (s[0] == 4 && s[1] == 4 && s[2] == 4) return vec::binary_f32(*vop, a, b, out, n, 0);
      if (s[0] == 4 && s[1] == 4 && s[2] == 0) return vec::binary_f32(*vop, a, b, out, n, 1);
      if (s[0] == 4 && s[1] == 0 && s[2] == 4) return vec::binary_f32(*vop, a, b, out, n, 2);
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<float*>(d[0] + k * s[0]) =
            op(*reinterpret_cast<const float*>(d[1] + k * s[1]),
               *reinterpret_cast<const float*>(d[2] + k * s[2]));
    });
    return;
  }
  dispatch_all(iter.dtype(0), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(iter, [&](T a, T b) -> T { return static_cast<T>(op(static_cast<M>(a), static_cast<M>(b))); });
  });
}

void add_kernel(const TensorIter& it, const ElementwiseParams&) {
  arith(it, "add", vec::Binary::Add, [](auto a, auto b) { return wrapping_add(a, b); });
}
void sub_kernel(const TensorIter& it, const ElementwiseParams&) {
  arith(it, "sub", vec::Binary::Sub, [](auto a, auto b) { return wrapping_sub(a, b); });
}
void mul_kernel(const TensorIter& it, const ElementwiseParams&) {
  if (it.dtype(0) == kBool) {
    return cpu_kernel(it, [](bool a, bool b) -> bool { return a && b; });
  }
  arith(it, "mul", vec::Binary::Mul, [](auto a, auto b) { return wrapping_mul(a, b); });
}
void div_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_floating(it.dtype(0), "div", [](auto) {});  // ints were promoted by the op
  arith(it, "div", vec::Binary::Div, [](auto a, auto b) { return a / b; });
}

template <typename T>
T floor_div_int(T a, T b) {
  EMBER_CHECK(b != 0, "floor_divide: ZeroDivisionError (integer division by zero)");
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return wrapping_neg(a);  // INT_MIN / -1 traps in C; PyTorch's dies of SIGFPE
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <typename M>
M floor_div_float(M a, M b) {
  if (b == 0) return a / b;
  M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(M(0), a / b);
  M fl = std::floor(div);
  if (div - fl > M(0.5)) fl += 1;
  return fl;
}
void floor_divide_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_numeric(it.dtype(0), "floor_divide", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>)
      cpu_kernel(it, [](T a, T b) -> T { return floor_div_int(a, b); });
    else
      cpu_kernel(it, [](T a, T b) -> T { return static_cast<T>(floor_div_float<M>(a, b)); });
  });
}

void remainder_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_numeric(it.dtype(0), "remainder", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(it, [](T a, T b) -> T {
        EMBER_CHECK(b != 0, "remainder: ZeroDivisionError (integer modulo by zero)");
        if constexpr (std::is_signed_v<T>)
          if (b == -1) return 0;  // INT_MIN % -1 traps in C
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      });
    } else {
      cpu_kernel(it, [](T a, T b) -> T {
        M r = std::fmod(static_cast<M>(a), static_cast<M>(b));
        if (r != 0 && ((static_cast<M>(b) < 0) != (r < 0))) r += static_cast<M>(b);
        return static_cast<T>(r);
      });
    }
  });
}

// A negative exponent gives PyTorch's integer results: 1 / base^|exp|
// truncated, so 1 for base 1, +-1 for base -1, 0 otherwise (pow(Tensor,
// Scalar) refuses a negative scalar exponent before the kernel, as PyTorch).
template <typename T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = wrapping_mul(result, base);
    exp = static_cast<T>(exp >> 1);
    base = wrapping_mul(base, base);
  }
  return result;
}
void pow_kernel(const TensorIter& it, const ElementwiseParams&) {
  dispatch_numeric(it.dtype(0), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>)
      cpu_kernel(it, [](T a, T b) -> T { return int_pow(a, b); });
    else
      cpu_kernel(it, [](T a, T b) -> T {
        M e = static_cast<M>(b);
        if (e == M(2)) return static_cast<T>(static_cast<M>(a) * static_cast<M>(a));
        return static_cast<T>(std::pow(static_cast<M>(a), e));
      });
  });
}

template <bool kMax>
void extreme_kernel(const TensorIter& it) {
  dispatch_all(it.dtype(0), kMax ? "maximum" : "minimum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [](T a, T b) -> T {
      M x = static_cast<M>(a), y = static_cast<M>(b);
      if constexpr (!std::is_integral_v<M>) {
        if (x != x) return a;  // NaN propagates
        if (y != y) return b;
      }
      return kMax ? (x > y ? a : b) : (x < y ? a : b);
    });
  });
}
void maximum_kernel(const TensorIter& it, const ElementwiseParams&) { extreme_kernel<true>(it); }
void minimum_kernel(const TensorIter& it, const ElementwiseParams&) { extreme_kernel<false>(it); }

}  // namespace

namespace {
// Note [flat float loops]: the same arithmetic as arith() above for unit
// strides, without the iterator.
template <vec::Binary V, typename F>
void flat_f32(const float* a, const float* b, float* out, int64_t n) {
  if (n < 8) {
    for (int64_t k = 0; k < n; ++k) out[k] = F{}(a[k], b[k]);
    return;
  }
  vec::binary_f32(V, a, b, out, n, 0);
}
}  // namespace

FlatBinaryF32* flat_binary_f32(Op op) {
  switch (op) {
    case Op::add: return flat_f32<vec::Binary::Add, std::plus<float>>;
    case Op::sub: return flat_f32<vec::Binary::Sub, std::minus<float>>;
    case Op::mul: return flat_f32<vec::Binary::Mul, std::multiplies<float>>;
    case Op::div: return flat_f32<vec::Binary::Div, std::divides<float>>;
    default: return nullptr;
  }
}

EMBER_REGISTER_KERNEL(add, CPU, add_kernel);
EMBER_REGISTER_KERNEL(sub, CPU, sub_kernel);
EMBER_REGISTER_KERNEL(mul, CPU, mul_kernel);
EMBER_REGISTER_KERNEL(div, CPU, div_kernel);
EMBER_REGISTER_KERNEL(floor_divide, CPU, floor_divide_kernel);
EMBER_REGISTER_KERNEL(remainder, CPU, remainder_kernel);
EMBER_REGISTER_KERNEL(pow, CPU, pow_kernel);
EMBER_REGISTER_KERNEL(maximum, CPU, maximum_kernel);
EMBER_REGISTER_KERNEL(minimum, CPU, minimum_kernel);

}  // namespace ember

// Unary math kernels. float32 contiguous runs use Highway (vec_f32); other
// dtypes and strided runs use the scalar formula in opmath precision.
#include <cmath>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_types.h"
#include "kernels/wrapping.h"

namespace ember {
namespace {

enum class Domain { Floating, Numeric, All };

template <Domain domain, typename F>
void unary(const TensorIter& it, const char* name, std::optional<vec::Unary> vop, const F& f) {
  if (vop && it.dtype(0) == kFloat32 && it.dtype(1) == kFloat32) {
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      if (s[0] == 4 && s[1] == 4)
        return vec::unary_f32(*vop, reinterpret_cast<const float*>(d[1]), reinterpret_cast<float*>(d[0]), n);
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<float*>(d[0] + k * s[0]) = f(*reinterpret_cast<const float*>(d[1] + k * s[1]));
    });
    return;
  }
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    cpu_kernel(it, [&](T a) -> T { return static_cast<T>(f(static_cast<M>(a))); });
  };
  if constexpr (domain == Domain::Floating) dispatch_floating(it.dtype(0), name, body);
  else if constexpr (domain == Domain::Numeric) dispatch_numeric(it.dtype(0), name, body);
  else dispatch_all(it.dtype(0), name, body);
}

template <typename M>
M sigmoid_scalar(M x) { return M(1) / (M(1) + std::exp(-x)); }

#define EMBER_UNARY(name, domain, vop, expr)                                   \
  void name##_kernel(const TensorIter& it, const ElementwiseParams&) {         \
    unary<Domain::domain>(it, #name, vop, [](auto x) -> decltype(x) { return expr; }); \
  }                                                                            \
  EMBER_REGISTER_KERNEL(name, CPU, name##_kernel);

constexpr std::optional<vec::Unary> kNoVec = std::nullopt;

EMBER_UNARY(neg, Numeric, vec::Unary::Neg, wrapping_neg(x))
EMBER_UNARY(abs, Numeric, vec::Unary::Abs, x < 0 ? wrapping_neg(x) : x)
EMBER_UNARY(exp, Floating, vec::Unary::Exp, std::exp(x))
EMBER_UNARY(expm1, Floating, vec::Unary::Expm1, std::expm1(x))
EMBER_UNARY(log, Floating, vec::Unary::Log, std::log(x))
EMBER_UNARY(log1p, Floating, vec::Unary::Log1p, std::log1p(x))
EMBER_UNARY(sqrt, Floating, vec::Unary::Sqrt, std::sqrt(x))
EMBER_UNARY(rsqrt, Floating, vec::Unary::Rsqrt, 1 / std::sqrt(x))
EMBER_UNARY(sin, Floating, vec::Unary::Sin, std::sin(x))
EMBER_UNARY(cos, Floating, vec::Unary::Cos, std::cos(x))
EMBER_UNARY(tanh, Floating, vec::Unary::Tanh, std::tanh(x))
EMBER_UNARY(sigmoid, Floating, vec::Unary::Sigmoid, sigmoid_scalar(x))
// Rounds to the nearest bfloat16 (ties to even; NaN stays NaN) and widens
// back: one pass for what t.to(bf16).to(f32) did in two.
void round_bf16_kernel(const TensorIter& it, const ElementwiseParams&) {
  EMBER_CHECK_TYPE(it.dtype(0) == kFloat32 && it.dtype(1) == kFloat32, "round_bf16: expected float32, got {}",
                   to_string(it.dtype(1)));
  cpu_kernel(it, [](float x) -> float { return static_cast<float>(BFloat16(x)); });
}
EMBER_REGISTER_KERNEL(round_bf16, CPU, round_bf16_kernel);

// x != x keeps NaN, like PyTorch's relu (clamp_min).
EMBER_UNARY(relu, Numeric, vec::Unary::Relu, (x > 0 || x != x) ? x : decltype(x)(0))
EMBER_UNARY(gelu, Floating, vec::Unary::Gelu, decltype(x)(0.5) * x * (1 + std::erf(x * decltype(x)(0.7071067811865476))))
EMBER_UNARY(gelu_tanh, Floating, vec::Unary::GeluTanh,
            decltype(x)(0.5) * x *
                (1 + std::tanh(decltype(x)(0.7978845608028654) * (x + decltype(x)(0.044715) * x * x * x))))
EMBER_UNARY(silu, Floating, vec::Unary::Silu, x * sigmoid_scalar(x))
EMBER_UNARY(erf, Floating, kNoVec, std::erf(x))
EMBER_UNARY(sign, Numeric, kNoVec, decltype(x)((x > 0) - (x < 0)))
EMBER_UNARY(floor, Floating, vec::Unary::Floor, std::floor(x))
EMBER_UNARY(ceil, Floating, vec::Unary::Ceil, std::ceil(x))
EMBER_UNARY(round, Floating, vec::Unary::Round, std::nearbyint(x))
EMBER_UNARY(trunc, Floating, vec::Unary::Trunc, std::trunc(x))
EMBER_UNARY(reciprocal, Floating, vec::Unary::Reciprocal, 1 / x)

#undef EMBER_UNARY

}  // namespace
}  // namespace ember

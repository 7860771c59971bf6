// sum, prod, amax, amin, all, any: CPU reduction kernels built from reducers
// (see reduce_loops.h). The ops layer guarantees in dtype == out dtype.
#include <cmath>
#include <limits>

#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/cpu/vec_reduce.h"
#include "kernels/dispatch.h"
#include "kernels/wrapping.h"

namespace ember {
namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// Sum (times scale, for mean) accumulated in opmath: float for 16-bit floats.
template <typename T>
struct SumReducer {
  using in_t = T;
  using acc_t = opmath_t<T>;
  using out_t = T;
  acc_t scale = 1;
  acc_t init() const { return acc_t(0); }
  acc_t step(acc_t a, T x) const { return wrapping_add(a, static_cast<acc_t>(x)); }
  acc_t merge(acc_t a, acc_t b) const { return wrapping_add(a, b); }
  T finish(acc_t a) const { return static_cast<T>(a * scale); }
};

// float32: SIMD rows with per-block double accumulation (Note [ReduceIter]).
struct SumF32Reducer : SumReducer<float> {
  float row(const float* x, int64_t n) const {
    return static_cast<float>(vec::sum_f32_precise(x, n));
  }
};

template <typename T>
struct ProdReducer {
  using in_t = T;
  using acc_t = opmath_t<T>;
  using out_t = T;
  acc_t init() const { return acc_t(1); }
  acc_t step(acc_t a, T x) const { return wrapping_mul(a, static_cast<acc_t>(x)); }
  acc_t merge(acc_t a, acc_t b) const { return wrapping_mul(a, b); }
  T finish(acc_t a) const { return static_cast<T>(a); }
};

// Max (kMax) or min; a NaN anywhere wins, as in torch.amax.
template <typename T, bool kMax>
struct ExtremeReducer {
  using in_t = T;
  using acc_t = opmath_t<T>;
  using out_t = T;
  acc_t init() const {
    if constexpr (std::is_same_v<T, bool>) return !kMax;
    else if constexpr (std::numeric_limits<acc_t>::has_infinity)
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    else return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
  acc_t merge(acc_t a, acc_t b) const {
    if (is_nan(a)) return a;
    return (kMax ? b > a : b < a) || is_nan(b) ? b : a;
  }
  acc_t step(acc_t a, T x) const { return merge(a, static_cast<acc_t>(x)); }
  T finish(acc_t a) const { return static_cast<T>(a); }
};

template <bool kMax>
struct ExtremeF32Reducer : ExtremeReducer<float, kMax> {
  float row(const float* x, int64_t n) const {
    return n == 0 ? this->init() : (kMax ? vec::max_f32(x, n) : vec::min_f32(x, n));
  }
};

template <bool kAll>
struct LogicalReducer {
  using in_t = bool;
  using acc_t = bool;
  using out_t = bool;
  bool init() const { return kAll; }
  bool step(bool a, bool x) const { return kAll ? (a && x) : (a || x); }
  bool merge(bool a, bool b) const { return step(a, b); }
  bool finish(bool a) const { return a; }
};

void sum_kernel(const ReduceIter& it, const ReduceParams& p) {
  if (it.in_dtype == kFloat32)
    return reduce_kernel(it, SumF32Reducer{{static_cast<float>(p.scale)}});
  dispatch_numeric(it.in_dtype, "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    SumReducer<T> r;
    r.scale = static_cast<opmath_t<T>>(p.scale);
    reduce_kernel(it, r);
  });
}

void prod_kernel(const ReduceIter& it, const ReduceParams&) {
  dispatch_numeric(it.in_dtype, "prod", [&](auto tag) {
    reduce_kernel(it, ProdReducer<typename decltype(tag)::type>{});
  });
}

template <bool kMax>
void extreme_kernel(const ReduceIter& it, const ReduceParams&) {
  if (it.in_dtype == kFloat32) return reduce_kernel(it, ExtremeF32Reducer<kMax>{});
  dispatch_all(it.in_dtype, kMax ? "amax" : "amin", [&](auto tag) {
    reduce_kernel(it, ExtremeReducer<typename decltype(tag)::type, kMax>{});
  });
}

template <bool kAll>
void logical_kernel(const ReduceIter& it, const ReduceParams&) {
  EMBER_ASSERT(it.in_dtype == kBool, "{}: kernel expects a bool input", kAll ? "all" : "any");
  reduce_kernel(it, LogicalReducer<kAll>{});
}

}  // namespace

EMBER_REGISTER_KERNEL(sum, CPU, sum_kernel);
EMBER_REGISTER_KERNEL(prod, CPU, prod_kernel);
EMBER_REGISTER_KERNEL(amax, CPU, extreme_kernel<true>);
EMBER_REGISTER_KERNEL(amin, CPU, extreme_kernel<false>);
EMBER_REGISTER_KERNEL(all, CPU, logical_kernel<true>);
EMBER_REGISTER_KERNEL(any, CPU, logical_kernel<false>);

}  // namespace ember

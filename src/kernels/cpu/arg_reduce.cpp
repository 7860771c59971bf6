// argmax / argmin (and the values of max(dim) / min(dim)): the index of the
// first extreme element along the reduced axis; a NaN counts as the extreme.
#include <cmath>
#include <type_traits>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"

namespace ember {
namespace {

template <typename A>
bool nan_(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
  return false;
}

// Does v replace the current best b? Strict comparison keeps the first
// occurrence; the first NaN wins and is never replaced.
template <bool kMax, typename A>
bool better(A v, A b) {
  if (nan_(b)) return false;
  return (kMax ? v > b : v < b) || nan_(v);
}

// One output column (o, j): walks n elements `inner` apart.
template <typename T, bool kMax>
void arg_column(const T* x, int64_t n, int64_t inner, T* value, int64_t* index) {
  using A = opmath_t<T>;
  A best = static_cast<A>(x[0]);
  int64_t bi = 0;
  for (int64_t r = 1; r < n; ++r) {
    A v = static_cast<A>(x[r * inner]);
    if (better<kMax>(v, best)) {
      best = v;
      bi = r;
    }
  }
  if (value) *value = static_cast<T>(best);
  *index = bi;
}

template <typename T, bool kMax>
void arg_reduce_typed(const ReduceIter& it) {
  const T* in = static_cast<const T*>(it.in);
  T* values = static_cast<T*>(it.out);
  int64_t* indices = static_cast<int64_t*>(it.out2);
  const int64_t n = it.reduce, inner = it.inner;
  // Consecutive outputs are adjacent columns, so the strided walks of one
  // chunk share cache lines.
  parallel_for(0, it.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t idx = b; idx < e; ++idx) {
                   const T* x = in + (idx / inner) * n * inner + idx % inner;
                   arg_column<T, kMax>(x, n, inner, values ? values + idx : nullptr, indices + idx);
                 }
               });
}

template <bool kMax>
void arg_reduce_kernel(const ReduceIter& it, const ReduceParams&) {
  EMBER_ASSERT(it.reduce > 0, "{}: empty reduction reached the kernel", it.op);
  dispatch_all(it.in_dtype, kMax ? "argmax" : "argmin", [&](auto tag) {
    arg_reduce_typed<typename decltype(tag)::type, kMax>(it);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(argmax, CPU, arg_reduce_kernel<true>);
EMBER_REGISTER_KERNEL(argmin, CPU, arg_reduce_kernel<false>);

}  // namespace ember

// cumsum: running sum along the `reduce` axis of a contiguous [outer, reduce,
// inner] block, accumulated in double for floats (as PyTorch's CPU kernel)
// and int64 for integers.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"
#include "kernels/wrapping.h"

namespace ember {
namespace {

template <typename T>
using scan_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <typename T>
void cumsum_typed(const ReduceIter& it) {
  using A = scan_acc_t<T>;
  const T* in = static_cast<const T*>(it.in);
  T* out = static_cast<T*>(it.out);
  const int64_t n = it.reduce, inner = it.inner;
  constexpr int64_t B = 256;  // columns per tile
  const int64_t tiles_per_row = (inner + B - 1) / B;
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * std::min(B, inner), 1));
  parallel_for(0, it.outer * tiles_per_row, grain, [&](int64_t b, int64_t e) {
    A acc[B];
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / tiles_per_row, j0 = (t % tiles_per_row) * B;
      int64_t len = std::min(B, inner - j0);
      std::fill(acc, acc + len, A(0));
      for (int64_t r = 0; r < n; ++r) {
        int64_t base = (o * n + r) * inner + j0;
        for (int64_t k = 0; k < len; ++k) {
          acc[k] = wrapping_add(acc[k], static_cast<A>(in[base + k]));
          out[base + k] = static_cast<T>(acc[k]);
        }
      }
    }
  });
}

void cumsum_kernel(const ReduceIter& it) {
  if (it.outer * it.reduce * it.inner == 0) return;
  dispatch_numeric(it.in_dtype, "cumsum", [&](auto tag) { cumsum_typed<typename decltype(tag)::type>(it); });
}

}  // namespace

EMBER_REGISTER_KERNEL(cumsum, CPU, cumsum_kernel);

}  // namespace ember

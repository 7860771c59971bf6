// nonzero kernel: coordinates of the non-zero elements, row-major.
#include "kernels/cpu/compact.h"
#include "kernels/dispatch.h"
#include "kernels/indexing.h"

namespace ember {
namespace {

Tensor nonzero_kernel(const Tensor& self) {
  const int64_t ndim = self.dim();
  const DimVector sizes(self.sizes());
  Tensor out;
  int64_t* dst = nullptr;
  dispatch_all(self.dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const T* src = static_cast<const T*>(self.data_ptr());
    compact(
        self.numel(), [&](int64_t p) { return static_cast<M>(src[p]) != static_cast<M>(0); },
        [&](int64_t total) {
          out = kernel_empty({total, ndim}, kInt64, self.device());
          dst = out.data_ptr<int64_t>();
        },
        [&](int64_t p, int64_t rank) {
          for (int64_t d = ndim; d-- > 0;) {
            dst[rank * ndim + d] = p % sizes[d];
            p /= sizes[d];
          }
        });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(nonzero, CPU, nonzero_kernel);

}  // namespace ember

// masked_select kernel: the elements where a bool mask is true, row-major.
#include <type_traits>

#include "kernels/cpu/compact.h"
#include "kernels/indexing.h"

namespace ember {
namespace {

Tensor masked_select_kernel(const Tensor& self, const Tensor& mask) {
  const bool* m = mask.data_ptr<bool>();
  Tensor out;
  dispatch_by_size(self.element_size(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* src = static_cast<const T*>(self.data_ptr());
    T* dst = nullptr;
    compact(
        self.numel(), [&](int64_t p) { return m[p]; },
        [&](int64_t total) {
          out = kernel_empty({total}, self.dtype(), self.device());
          dst = static_cast<T*>(out.data_ptr());
        },
        [&](int64_t p, int64_t rank) { dst[rank] = src[p]; });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(masked_select, CPU, masked_select_kernel);

}  // namespace ember

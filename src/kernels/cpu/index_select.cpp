// index_select kernel: copies whole inner blocks (memcpy) or single elements.
#include <cstring>

#include "ember/core/parallel.h"
#include "kernels/indexing.h"

namespace ember {
namespace {

// self viewed as [outer, size(dim), inner]; out as [outer, len(index), inner].
void index_select_kernel(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= self.sizes()[d];
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.sizes()[d];
  const int64_t src_size = self.dim() == 0 ? 1 : self.sizes()[dim];
  const int64_t n = index.numel();
  const int64_t* idx = index.data_ptr<int64_t>();
  const char* src = static_cast<const char*>(self.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(kGrainSize / std::max<int64_t>(inner, 1), 1);
  if (inner == 1) {
    // Single elements (embedding of scalars, 1-D selects): a typed copy loop.
    dispatch_by_size(self.element_size(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* s = reinterpret_cast<const T*>(src);
      T* d = reinterpret_cast<T*>(dst);
      parallel_for(0, outer * n, grain, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) d[it] = s[(it / n) * src_size + idx[it % n]];
      });
    });
    return;
  }
  const size_t bytes = static_cast<size_t>(inner) * self.element_size();
  parallel_for(0, outer * n, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t o = it / n, i = it % n;
      std::memcpy(dst + it * bytes, src + (o * src_size + idx[i]) * bytes, bytes);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(index_select, CPU, index_select_kernel);

}  // namespace ember

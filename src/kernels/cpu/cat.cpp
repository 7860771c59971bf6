// cat kernel: every input is a run of contiguous blocks, copied with memcpy.
#include <cstring>

#include "ember/core/parallel.h"
#include "kernels/indexing.h"

namespace ember {
namespace {

// Note [cat layout]: with outer = prod(sizes[:dim]) and inner =
// prod(sizes[dim+1:]), input i is `outer` blocks of size(dim) * inner
// elements, and block o lands at row o of out, after the blocks of inputs
// 0..i-1. Work items are (row, input) pairs so one big input (batching with
// dim 0) and many small rows both split across threads.
void cat_kernel(const Tensor& out, TensorList inputs, int64_t dim) {
  const int64_t es = static_cast<int64_t>(out.element_size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.sizes()[d];
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.sizes()[d];
  const int64_t out_row = out.sizes()[dim] * inner * es;
  const int64_t n = static_cast<int64_t>(inputs.size());

  std::vector<const char*> src(n);
  std::vector<int64_t> block(n), offset(n);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    src[i] = static_cast<const char*>(inputs[i].data_ptr());
    block[i] = inputs[i].sizes()[dim] * inner * es;
    offset[i] = off;
    off += block[i];
  }
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t items = outer * n;
  const int64_t avg_elems = std::max<int64_t>(out.numel() / std::max<int64_t>(items, 1), 1);
  const int64_t grain = std::max<int64_t>(kGrainSize / avg_elems, 1);
  parallel_for(0, items, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t o = it / n, i = it % n;
      if (block[i] == 0) continue;
      std::memcpy(dst + o * out_row + offset[i], src[i] + o * block[i], static_cast<size_t>(block[i]));
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(cat, CPU, cat_kernel);

}  // namespace ember

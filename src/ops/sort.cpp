// Ordering ops: sort, argsort, topk.
#include "ember/core/grad_graph.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "kernels/indexing.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {

// values = t gathered at indices along dim: the gradient scatters back.
void record_values_grad(const char* name, const Tensor& t, const Tensor& values, const Tensor& indices, int64_t dim) {
  if (!any_requires_grad({&t})) return;
  record(name, {&t}, values, [in = DimVector(t.sizes()), indices, dim](const variable_list& g) -> variable_list {
    if (in.empty()) return {g[0].reshape(in)};
    return {scatter_add(zeros(in, g[0].dtype()), dim, indices, g[0])};
  });
}

}  // namespace

// `stable` is accepted for PyTorch compatibility; the CPU kernel is always
// stable, which is also a valid result for stable = false.
std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool /*stable*/) {
  dim = wrap_dim(dim, t.dim(), "sort");
  TensorOptions opts = TensorOptions(t.dtype()).device(t.device());
  Tensor values = empty(t.sizes(), opts);
  Tensor indices = empty(t.sizes(), opts.dtype(kInt64));
  if (t.numel() > 0)
    get_kernel<SortKernel>(Op::sort, t.device())(values, indices, t, dim, descending);
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    if (t.dim() == 0) th->unsupported("sort", "a sort of a 0-D tensor is not traced");
    else th->record(Op::sort, {&t}, {&values, &indices}, {{"dim", dim}, {"descending", descending}});
  }
  record_values_grad("SortBackward0", t, values, indices, dim);
  return {values, indices};
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending) {
  return sort(t, dim, descending, false).second;
}

// `sorted` = false allows any order; the kernel always returns sorted order.
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  dim = wrap_dim(dim, t.dim(), "topk");
  EMBER_CHECK_TYPE(t.dtype() != kBool, "topk: not implemented for bool tensors");
  int64_t len = t.dim() == 0 ? 1 : t.sizes()[dim];
  EMBER_CHECK_INDEX(k >= 0 && k <= len,
                    "topk: selected index k out of range: k = {} but dimension {} of input {} has size {}",
                    k, dim, fmt::format("[{}]", fmt::join(t.sizes(), ", ")), len);
  DimVector shape(t.sizes());
  if (t.dim() > 0) shape[dim] = k;
  TensorOptions opts = TensorOptions(t.dtype()).device(t.device());
  Tensor values = empty(shape, opts);
  Tensor indices = empty(shape, opts.dtype(kInt64));
  if (values.numel() > 0)
    get_kernel<TopkKernel>(Op::topk, t.device())(values, indices, t, k, dim, largest);
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    if (t.dim() == 0) th->unsupported("topk", "a topk of a 0-D tensor is not traced");
    else th->record(Op::topk, {&t}, {&values, &indices}, {{"k", k}, {"dim", dim}, {"largest", largest}});
  }
  record_values_grad("TopkBackward0", t, values, indices, dim);
  return {values, indices};
}

}  // namespace ember

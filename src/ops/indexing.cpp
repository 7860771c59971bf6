// Joining, splitting and index-driven ops: cat/stack, split/chunk/unbind,
// index_select, gather, scatter, masked_select, nonzero, index_fill_.
#include "ops/op_util.h"
#include "ember/ops/indexing.h"

#include "ember/ops/elementwise.h"
#include "ember/core/grad_graph.h"
#include "ops/grad_utils.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"
#include "kernels/indexing.h"
#include "kernels/kernel_types.h"
#include "ops/trace_util.h"

namespace ember {
namespace {


// Every value of index (int64) lies in [0, size), or an error like PyTorch's:
// "gather: index 5 is out of bounds for dimension 1 with size 4". Checked
// before any write, so a failing in-place scatter_ leaves self untouched.
void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  Tensor c = index.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  for (int64_t i = 0, n = c.numel(); i < n; ++i)
    EMBER_CHECK_INDEX(p[i] >= 0 && p[i] < size, "{}: index {} is out of bounds for dimension {} with size {}",
                      op, p[i], dim, size);
}

void check_int64_index(const Tensor& index, const char* op) {
  EMBER_CHECK_TYPE(index.dtype() == kInt64, "{}(): Expected dtype int64 for index, got {}", op,
                   to_string(index.dtype()));
}

// The legacy rule PyTorch keeps for cat: a 1-D tensor with no elements is
// skipped whatever its size in other dims would have to be.
bool cat_skips(const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; }

// gather/scatter treat a 0-dim tensor as 1-D of one element.
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// Shape rules shared by gather and scatter (PyTorch's gather_shape_check /
// scatter_shape_check): same rank; index no larger than self apart from dim,
// and no larger than src in every dim.
void check_scatter_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index,
                                 const Tensor* src, const char* op) {
  const bool is_gather = std::string_view(op) == "gather";
  int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "{}: Index tensor must have the same number of dimensions as {} tensor (index {} vs {} {})",
              op, is_gather ? "input" : "self", shape_str(index.sizes()), is_gather ? "input" : "self",
              shape_str(self.sizes()));
  if (src)
    EMBER_CHECK(std::max<int64_t>(src->dim(), 1) == nd,
                "{}: Index tensor must have the same number of dimensions as src tensor (index {} vs src {})",
                op, shape_str(index.sizes()), shape_str(src->sizes()));
  Tensor s1 = at_least_1d(self), i1 = at_least_1d(index);
  for (int64_t d = 0; d < nd; ++d) {
    bool ok = d == dim || i1.sizes()[d] <= s1.sizes()[d];
    if (src) ok = ok && i1.sizes()[d] <= at_least_1d(*src).sizes()[d];
    if (ok) continue;
    if (is_gather)
      EMBER_ERROR("{}: Size does not match at dimension {} expected index {} to be smaller than self {} "
                  "apart from dimension {}",
                  op, d, shape_str(index.sizes()), shape_str(self.sizes()), dim);
    EMBER_ERROR("{}: Expected index {} to be smaller than self {} apart from dimension {}{}", op,
                shape_str(index.sizes()), shape_str(self.sizes()), dim,
                src ? fmt::format(" and to be smaller size than src {}", shape_str(src->sizes())) : "");
  }
}

// Validates and runs scatter / scatter_add into self (in place).
Tensor& scatter_into(Op op, Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     bool src_is_value) {
  const char* name = op_name(op).data();
  dim = wrap_dim(dim, self.dim(), name);
  check_int64_index(index, name);
  EMBER_CHECK_TYPE(src.dtype() == self.dtype(),
                   "{}(): Expected self.dtype to be equal to src.dtype ({} vs {})", name,
                   to_string(self.dtype()), to_string(src.dtype()));
  check_scatter_gather_shapes(self, dim, index, src_is_value ? nullptr : &src, name);
  if (index.numel() == 0) return self;
  Tensor self1 = at_least_1d(self), index1 = at_least_1d(index), src1 = at_least_1d(src);
  check_index_range(index1, self1.sizes()[dim], dim, name);
  get_kernel<ScatterKernel>(op, self.device())(self1, dim, index1, src1);
  // Traced as a write over the whole of self (a new value in the graph).
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    if (self.dim() == 0) th->unsupported(op_name(op), "a scatter into a 0-D tensor is not traced");
    else th->record(op, {&self, &index, &src}, {&self}, {{"dim", dim}});
  }
  self.bump_version();
  return self;
}

}  // namespace

// ---- joining and splitting ----

Tensor cat(TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "cat: expected a non-empty list of Tensors");
  ScalarType dt = tensors[0].dtype();
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.dim() > 0, "cat: zero-dimensional tensor (at position {}) cannot be concatenated", i);
    dt = promote_types(dt, t.dtype());
    if (!ref && !cat_skips(t)) ref = &t;
  }
  if (!ref) return empty({0}, TensorOptions(dt).device(tensors[0].device()));
  dim = wrap_dim(dim, ref->dim(), "cat");

  DimVector shape(ref->sizes());
  shape[dim] = 0;
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (cat_skips(t)) continue;
    EMBER_CHECK(t.dim() == ref->dim(), "cat: Tensors must have same number of dimensions: got {} and {}",
                ref->dim(), t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      EMBER_CHECK(d == dim || t.sizes()[d] == ref->sizes()[d],
                  "cat: sizes of tensors must match except in dimension {}. Expected size {} but got "
                  "size {} for tensor number {} in the list",
                  dim, ref->sizes()[d], t.sizes()[d], i);
    }
    shape[dim] += t.sizes()[dim];
    parts.push_back(t.to(dt).contiguous());
  }
  Tensor out = empty(shape, TensorOptions(dt).device(ref->device()));
  if (out.numel() > 0) get_kernel<CatKernel>(Op::cat, out.device())(out, parts, dim);
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    std::vector<const Tensor*> ins;
    for (const Tensor& p : parts) ins.push_back(&p);
    th->record(Op::cat, ins, {&out}, {{"dim", dim}});
  }
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  if (any_requires_grad(inputs)) {
    // Each input's gradient is its slice of g along dim (skipped inputs get none).
    std::vector<int64_t> lengths;
    std::vector<ScalarType> dtypes;
    for (const Tensor& t : tensors) {
      lengths.push_back(cat_skips(t) ? -1 : t.sizes()[dim]);
      dtypes.push_back(t.dtype());
    }
    record("CatBackward0", inputs, {}, out, [lengths, dtypes, dim](const variable_list& g) -> variable_list {
      variable_list grads;
      int64_t start = 0;
      for (size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] < 0) {
          grads.emplace_back();
          continue;
        }
        Tensor piece = g[0].narrow(dim, start, lengths[i]);
        grads.push_back(piece.dtype() == dtypes[i] ? piece : piece.to(dtypes[i]));
        start += lengths[i];
      }
      return grads;
    });
  }
  return out;
}

Tensor stack(TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes().equals(tensors[0].sizes()),
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
                shape_str(tensors[0].sizes()), shape_str(tensors[i].sizes()), i);
    parts.push_back(tensors[i].unsqueeze(dim));
  }
  return cat(parts, dim);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size={}", split_size);
  dim = wrap_dim(dim, t.dim(), "split");
  int64_t size = t.sizes()[dim];
  EMBER_CHECK(split_size > 0 || size == 0,
              "split: split_size can only be 0 if dimension size is 0, but got dimension size of {}", size);
  int64_t n = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t start = i * split_size;
    out.push_back(t.narrow(dim, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "split_with_sizes expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, t.dim(), "split_with_sizes");
  int64_t size = t.sizes()[dim], total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                "split_sizes={}", shape_str(sizes));
    total += s;
  }
  EMBER_CHECK(total == size,
              "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at "
              "dimension {}), but got split_sizes={}",
              size, dim, shape_str(sizes));
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(t.narrow(dim, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  dim = wrap_dim(dim, t.dim(), "chunk");
  int64_t size = t.sizes()[dim];
  int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` (empty) pieces, like PyTorch.
  if (split_size == 0 && size == 0) return split_with_sizes(t, std::vector<int64_t>(chunks, 0), dim);
  return split(t, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  EMBER_CHECK_INDEX(t.dim() > 0, "unbind: Dimension specified as {} but tensor has no dimensions", dim);
  dim = wrap_dim(dim, t.dim(), "unbind");
  const int64_t n = t.sizes()[dim];
  std::vector<Tensor> out;
  out.reserve(n);
  {
    NoGradGuard no_grad;  // plain views; one node below gives them their history
    for (int64_t i = 0; i < n; ++i) out.push_back(t.select(dim, i));
  }
  if (n == 0 || !any_requires_grad({&t})) return out;
  // One UnbindBackward node stacks the pieces' gradients. Per-piece select
  // nodes would each embed a gradient into a zero tensor of t's full shape
  // and the engine would sum n of them: quadratic (RNN steps hit this).
  DimVector piece(t.sizes());
  piece.erase(dim);
  auto fn = [dim, piece](const variable_list& g) -> variable_list {
    ScalarType dt = kFloat32;
    for (const Tensor& x : g)
      if (x.defined()) dt = x.dtype();
    std::vector<Tensor> parts(g.size());
    for (size_t i = 0; i < g.size(); ++i) parts[i] = g[i].defined() ? g[i] : zeros(piece, dt);
    return {stack(parts, dim)};
  };
  auto node = make_node<LambdaNodeNoSaved<decltype(fn)>>("UnbindBackward0", std::move(fn));
  node->num_outputs = static_cast<uint32_t>(n);
  collect_next_edges({&t}, node->next_edges);
  for (int64_t i = 0; i < n; ++i) set_history(out[i], node, static_cast<uint32_t>(i), /*is_view=*/true);
  return out;
}

// ---- gathering and scattering ----

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  EMBER_CHECK_TYPE(index.dtype() == kInt64 || index.dtype() == kInt32,
                   "index_select(): Expected dtype int32 or int64 for index, got {}", to_string(index.dtype()));
  EMBER_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector, got shape {}",
                    shape_str(index.sizes()));
  dim = wrap_dim(dim, t.dim(), "index_select");
  Tensor idx = index.to(kInt64).contiguous().reshape({-1});
  int64_t size = t.dim() == 0 ? 1 : t.sizes()[dim];
  check_index_range(idx, size, dim, "index_select");
  DimVector shape(t.sizes());
  if (t.dim() == 0) {
    EMBER_CHECK_INDEX(idx.numel() == 1, "index_select(): Index to scalar can have only 1 value, got {} value(s)",
                      idx.numel());
  } else {
    shape[dim] = idx.numel();
  }
  Tensor out = empty(shape, TensorOptions(t.dtype()).device(t.device()));
  Tensor tc = t.contiguous();
  if (out.numel() > 0) get_kernel<IndexSelectKernel>(Op::index_select, t.device())(out, tc, dim, idx);
  if (TraceHook* th = trace_hook()) [[unlikely]] th->record(Op::index_select, {&tc, &idx}, {&out}, {{"dim", dim}});
  if (any_requires_grad({&t})) {
    record("IndexSelectBackward0", {&t}, {save(idx)}, out,
           [in = DimVector(t.sizes()), dim, idx](const variable_list& g) -> variable_list {
             // Scatter-add each selected slice back to the row it came from.
             if (in.empty()) return {g[0].reshape(in)};
             DimVector view_shape(in.size(), 1);
             view_shape[dim] = idx.numel();
             Tensor full_index = idx.view(view_shape).expand(g[0].sizes()).contiguous();
             return {scatter_add(zeros(in, g[0].dtype()), dim, full_index, g[0])};
           });
  }
  return out;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  check_int64_index(index, "gather");
  dim = wrap_dim(dim, t.dim(), "gather");
  check_scatter_gather_shapes(t, dim, index, nullptr, "gather");
  Tensor out = empty(index.sizes(), TensorOptions(t.dtype()).device(t.device()));
  if (index.numel() == 0) return out;
  Tensor t1 = at_least_1d(t), index1 = at_least_1d(index);
  check_index_range(index1, t1.sizes()[dim], dim, "gather");
  get_kernel<GatherKernel>(Op::gather, t.device())(at_least_1d(out), t1, dim, index1);
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    if (t.dim() == 0 || index.dim() == 0) th->unsupported("gather", "a gather over a 0-D tensor or index is not traced");
    else th->record(Op::gather, {&t, &index}, {&out}, {{"dim", dim}});
  }
  if (any_requires_grad({&t})) {
    record("GatherBackward0", {&t}, out, [in = DimVector(t.sizes()), dim, index](const variable_list& g) -> variable_list {
      return {scatter_add(zeros(in, g[0].dtype()), dim, index, g[0])};
    });
  }
  return out;
}

// Derivatives: the scattered-over positions get no gradient from self
// (scatter) or all of it (scatter_add); src gets g gathered at index.
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = t.detach().clone();
  scatter_into(Op::scatter, out, dim, index, src, false);
  if (any_requires_grad({&t, &src})) {
    record("ScatterBackward0", {&t, &src}, out, [dim, index](const variable_list& g) -> variable_list {
      return {scatter(g[0], dim, index, 0), gather(g[0], dim, index)};
    });
  }
  return out;
}

Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor out = t.detach().clone();
  // The value broadcast (stride 0) to index's shape acts as src.
  Tensor src = scalar_tensor(value, TensorOptions(t.dtype()).device(t.device())).expand(index.sizes());
  scatter_into(Op::scatter, out, dim, index, src, true);
  if (any_requires_grad({&t})) {
    record("ScatterBackward1", {&t}, out, [dim, index](const variable_list& g) -> variable_list {
      return {scatter(g[0], dim, index, 0)};
    });
  }
  return out;
}

Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = t.detach().clone();
  scatter_into(Op::scatter_add, out, dim, index, src, false);
  if (any_requires_grad({&t, &src})) {
    record("ScatterAddBackward0", {&t, &src}, out, [dim, index](const variable_list& g) -> variable_list {
      return {g[0], gather(g[0], dim, index)};
    });
  }
  return out;
}

Tensor masked_select(const Tensor& t, const Tensor& mask) {
  EMBER_CHECK_TYPE(mask.dtype() == kBool || mask.dtype() == kUInt8,
                   "masked_select: expected BoolTensor for mask, got {}", to_string(mask.dtype()));
  DimVector shape = broadcast_shapes(t.sizes(), mask.sizes(), "masked_select");
  Tensor self_b = t.detach().expand(shape).contiguous();
  Tensor mask_b = mask.to(kBool).expand(shape).contiguous();
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->unsupported("masked_select", "its output size depends on the mask's values; use where(mask, x, 0) instead");
  Tensor out = get_kernel<MaskedSelectKernel>(Op::masked_select, t.device())(self_b, mask_b);
  if (any_requires_grad({&t})) {
    // Flat positions of the selected elements, to scatter g back.
    Tensor pos = nonzero(mask_b.reshape({-1})).reshape({-1});
    record("MaskedSelectBackward0", {&t}, out,
           [pos, shape, in = DimVector(t.sizes()), dt = t.dtype()](const variable_list& g) -> variable_list {
             Tensor flat = scatter_add(zeros({compute_numel(shape)}, g[0].dtype()), 0, pos, g[0]);
             return {grad_for(flat.reshape(shape), in, dt)};
           });
  }
  return out;
}

Tensor nonzero(const Tensor& t) {
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->unsupported("nonzero", "its output size depends on the tensor's values; use a mask with where() instead");
  return get_kernel<NonzeroKernel>(Op::nonzero, t.device())(t.contiguous());
}

// ---- Tensor methods ----

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return ember::gather(*this, dim, index); }
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  if (any_requires_grad({this, &src}))
    return inplace_with_grad(*this, "scatter_", [&](const Tensor& old) { return ember::scatter(old, dim, index, src); });
  return scatter_into(Op::scatter, *this, dim, index, src, false);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  if (any_requires_grad({this, &src}))
    return inplace_with_grad(*this, "scatter_add_",
                             [&](const Tensor& old) { return ember::scatter_add(old, dim, index, src); });
  return scatter_into(Op::scatter_add, *this, dim, index, src, false);
}

Tensor& Tensor::index_fill_(int64_t d, const Tensor& index, const Scalar& v) {
  EMBER_CHECK_TYPE(index.dtype() == kInt64, "index_fill_(): Expected dtype int64 for index, got {}",
                   to_string(index.dtype()));
  EMBER_CHECK_INDEX(index.dim() <= 1, "index_fill_(): Index has to be a vector, got shape {}",
                    shape_str(index.sizes()));
  d = wrap_dim(d, dim(), "index_fill_");
  int64_t size = dim() == 0 ? 1 : sizes()[d];
  std::vector<int64_t> idx = index.to_vector<int64_t>();
  // Negative indices count from the end here (unlike index_select).
  for (int64_t& i : idx) {
    EMBER_CHECK_INDEX(i >= -size && i < size, "index_fill_: index {} is out of bounds for dimension {} with size {}",
                      i, d, size);
    if (i < 0) i += size;
  }
  for (int64_t i : idx) {
    Tensor slice = dim() == 0 ? *this : select(d, i);
    TensorIter iter({&slice}, 1, "index_fill_");
    run_elementwise(Op::fill, iter, {v, std::nullopt}, device());
    if (trace_hook()) [[unlikely]] trace_fill(slice, v);
  }
  bump_version();
  return *this;
}

}  // namespace ember

// View ops.
//
// Note [views]: a view is a new TensorImpl over the same Storage with other
// sizes, strides and offset; writes through any view are seen by all, and
// all share the storage's version counter (Note [version counter]).
#include "ember/ops/view.h"

#include <algorithm>
#include <numeric>

#include "ember/core/grad_graph.h"
#include "ops/trace_util.h"
#include "ember/ops/factory.h"
#include "kernels/dispatch.h"
#include "ops/grad_utils.h"

namespace ember {
namespace {

// Every view op makes its result here, so the trace hook sees each view once.
Tensor make_view(const Tensor& t, DimVector sizes, DimVector strides, int64_t offset) {
  Tensor v(make_intrusive<TensorImpl>(t.storage(), t.dtype(), std::move(sizes), std::move(strides), offset));
  if (trace_hook()) [[unlikely]] trace_view(t, v);
  return v;
}

// Records a view op's backward (the result is a differentiable view).
template <typename F>
Tensor record_view(const char* name, const Tensor& base, Tensor out, F formula) {
  if (any_requires_grad({&base}))
    record(name, {&base}, out, [formula](const variable_list& g) -> variable_list { return {formula(g[0])}; },
           /*is_view=*/true);
  return out;
}

// The adjoint of slicing: a zero tensor of `sizes` with g written at
// [start:end:step] along dim. Differentiable (its backward slices again).
Tensor slice_embed(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor out = zeros(sizes, g.dtype());
  {
    NoGradGuard no_grad;
    Tensor dst = slice(out, dim, start, end, step);
    copy_(dst, g);
  }
  if (any_requires_grad({&g}))
    record("SliceEmbedBackward0", {&g}, out, [dim, start, end, step](const variable_list& gg) -> variable_list {
      return {slice(gg[0], dim, start, end, step)};
    });
  return out;
}

// Resolves one -1 in sizes against numel, or raises naming the op.
DimVector infer_size(IntArrayRef sizes, int64_t numel, const char* op) {
  DimVector out(sizes);
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK(infer < 0, "{}: only one dimension can be inferred, got shape [{}]", op,
                  fmt::join(sizes, ", "));
      infer = static_cast<int>(i);
    } else {
      EMBER_CHECK(sizes[i] >= 0, "{}: invalid shape dimension {} in [{}]", op, sizes[i],
                  fmt::join(sizes, ", "));
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0,
                "{}: shape '[{}]' is invalid for input of size {}", op, fmt::join(sizes, ", "), numel);
    out[infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "{}: shape '[{}]' is invalid for input of size {}", op,
                fmt::join(sizes, ", "), numel);
  }
  return out;
}

// Strides that let `newshape` view memory laid out as (oldshape, oldstride),
// or nullopt when some new dim would span two non-mergeable old dims.
std::optional<DimVector> compute_view_strides(IntArrayRef oldshape, IntArrayRef oldstride,
                                              IntArrayRef newshape) {
  DimVector newstride(newshape.size());
  if (oldshape.empty()) return DimVector(newshape.size(), 1);
  int64_t numel = compute_numel(oldshape);
  if (numel == 0) return contiguous_strides(newshape);
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(oldshape.size()) - 1; td >= 0; --td) {
    tensor_numel *= oldshape[td];
    if (td == 0 || (oldshape[td - 1] != 1 && oldstride[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base_stride = oldstride[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

}  // namespace

// Scatters g (a view with sizes/strides/offset over the input's storage) back
// onto the input's elements, summing where the view overlaps itself.
Tensor as_strided_backward(const Tensor& g, IntArrayRef in_sizes, IntArrayRef in_strides, int64_t in_offset,
                           IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  EMBER_CHECK(DimVector(in_strides) == contiguous_strides(in_sizes),
              "as_strided: backward is only supported for a contiguous input (got strides [{}] for size [{}])",
              fmt::join(in_strides, ", "), fmt::join(in_sizes, ", "));
  Tensor gc = contiguous(g.to(kFloat64));
  std::vector<double> acc(static_cast<size_t>(compute_numel(in_sizes)), 0.0);
  const double* src = gc.data_ptr<double>();
  int64_t n = gc.numel(), nd = static_cast<int64_t>(sizes.size());
  DimVector idx(sizes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t pos = offset - in_offset;
    for (int64_t d = 0; d < nd; ++d) pos += idx[d] * strides[d];
    acc[static_cast<size_t>(pos)] += src[k];
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  Tensor out = tensor(acc, in_sizes).to(g.dtype());
  if (any_requires_grad({&g}))
    record("AsStridedBackwardBackward0", {&g}, out,
           [sz = DimVector(sizes), st = DimVector(strides), rel = offset - in_offset](const variable_list& gg) -> variable_list {
             return {as_strided(contiguous(gg[0]), sz, st, rel + gg[0].storage_offset())};
           });
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dim 0 and -1
  EMBER_CHECK_INDEX(dim >= -n && dim < n,
                    "{}: dimension out of range (expected to be in range of [{}, {}], but got {})", op,
                    -n, n - 1, dim);
  return dim < 0 ? dim + n : dim;
}

Tensor view(const Tensor& t, IntArrayRef sizes) {
  DimVector shape = infer_size(sizes, t.numel(), "view");
  auto backward = [in = DimVector(t.sizes())](const Tensor& g) { return reshape(g, in); };
  if (t.is_contiguous())
    return record_view("ViewBackward0", t, make_view(t, shape, contiguous_strides(shape), t.storage_offset()), backward);
  auto strides = compute_view_strides(t.sizes(), t.strides(), shape);
  EMBER_CHECK(strides.has_value(),
              "view: shape [{}] is not compatible with input of size [{}] and stride [{}] (at least "
              "one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
              fmt::join(shape, ", "), fmt::join(t.sizes(), ", "), fmt::join(t.strides(), ", "));
  return record_view("ViewBackward0", t, make_view(t, shape, *strides, t.storage_offset()), backward);
}

Tensor reshape(const Tensor& t, IntArrayRef sizes) {
  DimVector shape = infer_size(sizes, t.numel(), "reshape");
  if (t.is_contiguous() || compute_view_strides(t.sizes(), t.strides(), shape)) return view(t, shape);
  return view(clone(t), shape);
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  int64_t n = t.dim();
  d0 = wrap_dim(d0, n, "transpose");
  d1 = wrap_dim(d1, n, "transpose");
  DimVector sizes(t.sizes()), strides(t.strides());
  if (n > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return record_view("TransposeBackward0", t, make_view(t, sizes, strides, t.storage_offset()),
                     [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  int64_t n = t.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == n,
              "permute: number of dims don't match: tensor has {} dims but got {} ([{}])", n,
              dims.size(), fmt::join(dims, ", "));
  DimVector sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    EMBER_CHECK(!seen[d], "permute: repeated dim {} in [{}]", d, fmt::join(dims, ", "));
    seen[d] = true;
    sizes[i] = t.sizes()[d];
    strides[i] = t.strides()[d];
  }
  DimVector inverse(n);
  for (int64_t i = 0; i < n; ++i) inverse[wrap_dim(dims[i], n, "permute")] = i;
  return record_view("PermuteBackward0", t, make_view(t, sizes, strides, t.storage_offset()),
                     [inverse](const Tensor& g) { return permute(g, inverse); });
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(t.dim() > 0, "narrow: cannot be applied to a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "narrow");
  int64_t size = t.sizes()[dim];
  if (start < 0) start += size;
  EMBER_CHECK_INDEX(start >= 0 && start <= size && length >= 0 && start + length <= size,
                    "narrow: start ({}) + length ({}) exceeds dimension size ({}) of dim {}", start,
                    length, size, dim);
  return slice(t, dim, start, start + length, 1);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  EMBER_CHECK_INDEX(t.dim() > 0, "select: cannot select from a 0-dim tensor");
  dim = wrap_dim(dim, t.dim(), "select");
  int64_t size = t.sizes()[dim];
  EMBER_CHECK_INDEX(index >= -size && index < size,
                    "select: index {} is out of bounds for dimension {} with size {}", index, dim, size);
  if (index < 0) index += size;
  DimVector sizes(t.sizes()), strides(t.strides());
  int64_t offset = t.storage_offset() + index * strides[dim];
  sizes.erase(dim);
  strides.erase(dim);
  return record_view("SelectBackward0", t, make_view(t, sizes, strides, offset),
                     [in = DimVector(t.sizes()), dim, index](const Tensor& g) {
                       return slice_embed(unsqueeze(g, dim), in, dim, index, index + 1, 1);
                     });
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  EMBER_CHECK_INDEX(t.dim() > 0, "slice: cannot slice a 0-dim tensor");
  EMBER_CHECK(step > 0, "slice: step must be positive, got {}", step);
  dim = wrap_dim(dim, t.dim(), "slice");
  int64_t size = t.sizes()[dim];
  // Python slice semantics: negative counts from the end, out of range clamps.
  auto clamp_index = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + size : *v;
    return std::clamp<int64_t>(x, 0, size);
  };
  int64_t b = clamp_index(start, 0), e = clamp_index(end, size);
  int64_t len = e > b ? (e - b + step - 1) / step : 0;
  DimVector sizes(t.sizes()), strides(t.strides());
  int64_t offset = t.storage_offset() + b * strides[dim];
  sizes[dim] = len;
  strides[dim] *= step;
  return record_view("SliceBackward0", t, make_view(t, sizes, strides, offset),
                     [in = DimVector(t.sizes()), dim, b, e, step](const Tensor& g) {
                       return slice_embed(g, in, dim, b, e, step);
                     });
}

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  int64_t n = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(n >= t.dim(),
              "expand: the number of sizes provided ({}) must be greater or equal to the number of "
              "dimensions in the tensor ({})",
              n, t.dim());
  DimVector out_sizes(n), out_strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t td = i - (n - t.dim());
    int64_t want = sizes[i];
    if (td < 0) {
      EMBER_CHECK(want >= 0, "expand: -1 is not allowed in a leading, non-existing dimension {}", i);
      out_sizes[i] = want;
      out_strides[i] = 0;
      continue;
    }
    int64_t have = t.sizes()[td];
    if (want == -1) want = have;
    EMBER_CHECK(have == want || have == 1,
                "expand: the expanded size of the tensor ({}) must match the existing size ({}) at "
                "non-singleton dimension {}. Target sizes: [{}]. Tensor sizes: [{}]",
                want, have, i, fmt::join(sizes, ", "), fmt::join(t.sizes(), ", "));
    out_sizes[i] = want;
    out_strides[i] = have == want ? t.strides()[td] : 0;
  }
  return record_view("ExpandBackward0", t, make_view(t, out_sizes, out_strides, t.storage_offset()),
                     [in = DimVector(t.sizes())](const Tensor& g) { return sum_to(g, in); });
}

Tensor squeeze(const Tensor& t) {
  DimVector sizes, strides;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.sizes()[i] == 1) continue;
    sizes.push_back(t.sizes()[i]);
    strides.push_back(t.strides()[i]);
  }
  return record_view("SqueezeBackward0", t, make_view(t, sizes, strides, t.storage_offset()),
                     [in = DimVector(t.sizes())](const Tensor& g) { return reshape(g, in); });
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim(), "squeeze");
  DimVector sizes(t.sizes()), strides(t.strides());
  if (t.dim() > 0 && t.sizes()[dim] == 1) {
    sizes.erase(dim);
    strides.erase(dim);
  }
  return record_view("SqueezeBackward1", t, make_view(t, sizes, strides, t.storage_offset()),
                     [in = DimVector(t.sizes())](const Tensor& g) { return reshape(g, in); });
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  DimVector sizes(t.sizes()), strides(t.strides());
  int64_t st = dim < t.dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert(dim, 1);
  strides.insert(dim, st);
  return record_view("UnsqueezeBackward0", t, make_view(t, sizes, strides, t.storage_offset()),
                     [dim](const Tensor& g) { return squeeze(g, dim); });
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  start_dim = wrap_dim(start_dim, t.dim(), "flatten");
  end_dim = wrap_dim(end_dim, t.dim(), "flatten");
  EMBER_CHECK(start_dim <= end_dim, "flatten: start_dim ({}) cannot come after end_dim ({})",
              start_dim, end_dim);
  DimVector shape;
  for (int64_t i = 0; i < start_dim; ++i) shape.push_back(t.sizes()[i]);
  int64_t prod = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) prod *= t.sizes()[i];
  shape.push_back(prod);
  for (int64_t i = end_dim + 1; i < t.dim(); ++i) shape.push_back(t.sizes()[i]);
  return reshape(t, shape);
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  dim = wrap_dim(dim, t.dim(), "unflatten");
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  DimVector inner = infer_size(sizes, t.sizes()[dim], "unflatten");
  DimVector shape;
  for (int64_t i = 0; i < dim; ++i) shape.push_back(t.sizes()[i]);
  for (int64_t s : inner) shape.push_back(s);
  for (int64_t i = dim + 1; i < t.dim(); ++i) shape.push_back(t.sizes()[i]);
  return view(t, shape);
}

Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset) {
  EMBER_CHECK(sizes.size() == strides.size(),
              "as_strided: mismatch in length of strides and shape ([{}] vs [{}])",
              fmt::join(sizes, ", "), fmt::join(strides, ", "));
  int64_t offset = storage_offset.value_or(t.storage_offset());
  for (size_t i = 0; i < sizes.size(); ++i)
    EMBER_CHECK(sizes[i] >= 0 && strides[i] >= 0,
                "as_strided: negative sizes or strides are not supported, got size [{}] stride [{}]",
                fmt::join(sizes, ", "), fmt::join(strides, ", "));
  EMBER_CHECK(offset >= 0, "as_strided: storage offset {} is negative", offset);
  // Overflow-checked (Note [size checks]): huge strides must not wrap around
  // into a small extent.
  const size_t need = compute_strided_nbytes(sizes, strides, offset, t.dtype(), "as_strided");
  const size_t item = t.element_size();
  EMBER_CHECK(need <= t.storage()->nbytes(),
              "as_strided: setStorage: sizes [{}], strides [{}], storage offset {} require {} "
              "elements, but the storage holds only {}",
              fmt::join(sizes, ", "), fmt::join(strides, ", "), offset, need / item, t.storage()->nbytes() / item);
  return record_view("AsStridedBackward0", t, make_view(t, DimVector(sizes), DimVector(strides), offset),
                     [in = DimVector(t.sizes()), in_strides = DimVector(t.strides()), in_offset = t.storage_offset(),
                      sz = DimVector(sizes), st = DimVector(strides), offset](const Tensor& g) {
                       return as_strided_backward(g, in, in_strides, in_offset, sz, st, offset);
                     });
}

Tensor broadcast_to(const Tensor& t, IntArrayRef sizes) { return expand(t, sizes); }

std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) {
    size_t n = std::max(shape.size(), t.sizes().size());
    DimVector out(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t a = i < n - shape.size() ? 1 : shape[i - (n - shape.size())];
      int64_t b = i < n - t.sizes().size() ? 1 : t.sizes()[i - (n - t.sizes().size())];
      EMBER_CHECK(a == b || a == 1 || b == 1,
                  "broadcast_tensors: shape [{}] does not broadcast with [{}]", fmt::join(t.sizes(), ", "),
                  fmt::join(shape, ", "));
      out[i] = a == 1 ? b : a;
    }
    shape = out;
  }
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

}  // namespace ember

// Index-driven composites over gather/scatter/index_select: take,
// take_along_dim, index_add/index_copy/index_fill, index_put, masked_scatter,
// scatter_reduce, select_scatter/slice_scatter, argwhere, and the Tensor
// methods and in-place forms of the gather/scatter family.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/grad_graph.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/tensor_iter.h"
#include "ops/op_util.h"

namespace ember {
namespace {

void check_index_dtype(const Tensor& index, const char* op) {
  EMBER_CHECK_TYPE(index.dtype() == kInt64 || index.dtype() == kInt32,
                   "{}(): Expected dtype int32 or int64 for index, got {}", op, to_string(index.dtype()));
}

// Index values in [-size, size) wrapped to [0, size), or IndexError naming op.
Tensor wrap_indices(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  Tensor idx = index.to(kInt64);
  for (int64_t v : idx.to_vector<int64_t>())
    EMBER_CHECK_INDEX(v >= -size && v < size, "{}: index {} is out of bounds for dimension {} with size {}", op, v,
                      dim, size);
  return where(lt(idx, 0), idx + size, idx);
}

// index_add / index_copy / index_fill's shared checks; returns the 1-D index
// and the dim. source (when given) must match t apart from dim.
std::pair<Tensor, int64_t> index_dim_args(const Tensor& t, int64_t dim, const Tensor& index, const Tensor* source,
                                          const char* op) {
  check_index_dtype(index, op);
  EMBER_CHECK_INDEX(index.dim() <= 1, "{}(): Index is supposed to be a vector, got shape {}", op,
                    shape_str(index.sizes()));
  int64_t d = wrap_dim(dim, t.dim(), op);
  int64_t size = t.dim() == 0 ? 1 : t.size(d);
  Tensor idx = index.to(kInt64).reshape({-1});
  if (source) {
    EMBER_CHECK_TYPE(source->dtype() == t.dtype(), "{}(): self ({}) and source ({}) must have the same scalar type",
                     op, to_string(t.dtype()), to_string(source->dtype()));
    int64_t src_len = source->dim() == 0 ? 1 : source->size(d);
    EMBER_CHECK_INDEX(src_len == idx.numel(),
                      "{}(): Number of indices ({}) should be equal to source.size(dim) ({}), source {} vs index {}",
                      op, idx.numel(), src_len, shape_str(source->sizes()), shape_str(index.sizes()));
    bool same = std::max<int64_t>(source->dim(), 1) == std::max<int64_t>(t.dim(), 1);
    for (int64_t i = 0; same && i < t.dim(); ++i) same = i == d || source->size(i) == t.size(i);
    EMBER_CHECK(same, "{}(): source {} should match self {} apart from dimension {}", op,
                shape_str(source->sizes()), shape_str(t.sizes()), d);
  }
  for (int64_t v : idx.to_vector<int64_t>())
    EMBER_CHECK_INDEX(v >= 0 && v < size, "{}(): index {} is out of bounds for dimension {} with size {}", op, v, d,
                      size);
  return {idx, d};
}

// The 1-D index along d broadcast to `sizes` (scatter's full index).
Tensor expand_index(const Tensor& idx, IntArrayRef sizes, int64_t d) {
  DimVector view_shape(sizes.size(), 1);
  view_shape[d] = idx.numel();
  return idx.view(view_shape).expand(sizes).contiguous();
}

Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// Positions of self that some index element targets, as bool with t's shape.
Tensor touched(const Tensor& t, int64_t dim, const Tensor& index) {
  return ne(scatter(zeros(t.sizes(), kInt64), dim, index, Scalar(int64_t{1})), 0);
}

// scatter_reduce for prod / amax / amin: a loop over index's elements on
// the host (no scatter kernel of these reductions yet), in float64.
Tensor scatter_reduce_host(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool include_self) {
  Tensor idx = index.contiguous();
  DimVector isz(idx.sizes());
  Tensor src_c = src;
  for (int64_t i = 0; i < src.dim(); ++i) src_c = src_c.narrow(i, 0, isz[i]);
  std::vector<double> out = self.to_vector<double>(), sv = src_c.contiguous().to_vector<double>();
  std::vector<int64_t> iv = idx.to_vector<int64_t>();
  const int64_t nd = idx.dim();
  DimVector ostride(static_cast<size_t>(nd), 1);
  for (int64_t i = nd - 2; i >= 0; --i) ostride[i] = ostride[i + 1] * self.size(i + 1);
  const double init = reduce == "prod" ? 1.0
                      : reduce == "amax" ? -std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::infinity();
  std::vector<bool> seen(out.size(), false);
  DimVector coord(static_cast<size_t>(nd), 0);
  for (size_t e = 0; e < iv.size(); ++e) {
    int64_t target = 0;
    for (int64_t i = 0; i < nd; ++i) target += (i == dim ? iv[e] : coord[i]) * ostride[i];
    double& o = out[static_cast<size_t>(target)];
    if (!include_self && !seen[static_cast<size_t>(target)]) o = init;
    seen[static_cast<size_t>(target)] = true;
    double v = sv[e];
    if (reduce == "prod") o *= v;
    else if (std::isnan(v) || std::isnan(o)) o = std::numeric_limits<double>::quiet_NaN();
    else o = reduce == "amax" ? std::max(o, v) : std::min(o, v);
    for (int64_t i = nd - 1; i >= 0; --i) {  // next coordinate of index, row-major
      if (++coord[i] < isz[i]) break;
      coord[i] = 0;
    }
  }
  return tensor<double>(out, self.sizes()).to(self.dtype());
}

}  // namespace

Tensor take(const Tensor& t, const Tensor& index) {
  EMBER_CHECK_TYPE(index.dtype() == kInt64, "take(): Expected a long tensor for index, but got {}",
                   to_string(index.dtype()));
  const int64_t n = t.numel();
  for (int64_t v : index.to_vector<int64_t>())
    EMBER_CHECK_INDEX(v >= -n && v < n, "take: out of range: tried to access index {} on a tensor of {} elements.", v,
                      n);
  Tensor idx = where(lt(index, 0), index + n, index).reshape({-1});
  return index_select(t.reshape({-1}), 0, idx).reshape(index.sizes());
}

Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim) {
  EMBER_CHECK_TYPE(indices.dtype() == kInt64, "torch.take_along_dim(): dtype of indices should be Long but got {}",
                   to_string(indices.dtype()));
  if (!dim) return gather(t.reshape({-1}), 0, indices.reshape({-1}));
  EMBER_CHECK(t.dim() == indices.dim(),
              "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} "
              "dimensions for input, and {} dimensions for indices",
              t.dim(), indices.dim());
  int64_t d = wrap_dim(*dim, t.dim(), "take_along_dim");
  // Broadcast every dim but d.
  DimVector ts(t.sizes()), is(indices.sizes());
  ts[d] = is[d] = 1;
  DimVector b = broadcast_shapes(ts, is, "take_along_dim");
  DimVector tb(b), ib(b);
  if (t.dim() > 0) {
    tb[d] = t.size(d);
    ib[d] = indices.size(d);
  }
  return gather(t.expand(tb), d, indices.expand(ib));
}

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  auto [idx, d] = index_dim_args(t, dim, index, &source, "index_add");
  Tensor t1 = at_least_1d(t), s1 = at_least_1d(source);
  // alpha=2.5 adds twice the source to an int64 tensor; bool(alpha) to a bool one.
  const Scalar a = t.dtype() == kBool ? Scalar(alpha.to_bool()) : scalar_in(alpha, t.dtype());
  Tensor scaled = a.to<double>() == 1.0 ? s1 : s1 * a;
  return scatter_add(t1, d, expand_index(idx, s1.sizes(), d), scaled).reshape(t.sizes());
}

Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  auto [idx, d] = index_dim_args(t, dim, index, &source, "index_copy");
  Tensor t1 = at_least_1d(t), s1 = at_least_1d(source);
  return scatter(t1, d, expand_index(idx, s1.sizes(), d), s1).reshape(t.sizes());
}

Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value) {
  check_index_dtype(index, "index_fill");
  EMBER_CHECK_INDEX(index.dim() <= 1, "index_fill(): Index has to be a vector, got shape {}", shape_str(index.sizes()));
  int64_t d = wrap_dim(dim, t.dim(), "index_fill");
  int64_t size = t.dim() == 0 ? 1 : t.size(d);
  // Negative indices count from the end (like index_fill_).
  Tensor idx = wrap_indices(index.reshape({-1}), size, d, "index_fill");
  DimVector mshape(static_cast<size_t>(t.dim()), 1);
  if (t.dim() > 0) mshape[d] = size;
  Tensor mask = zeros({size}, kBool).index_fill_(0, idx, true).view(mshape);
  return where(mask, full({}, value, t.dtype()), t);
}

namespace {

// Note [advanced indexing]: t[indices] with index tensors, PyTorch's rules.
// An undefined index is a full slice (x[:, i] is {Tensor(), i}), dims past
// the list are full slices too, and a bool mask stands for its nonzero
// coordinates over as many dims as it has. The indexed result's shape is
// the indices' broadcast shape B in place of the indexed dims when those
// are adjacent, else B first and then the sliced dims. Both directions move
// the indexed dims to the front (a permutation), where one linear index
// over them selects rows of the flattened tensor.
struct AdvancedIndex {
  std::vector<Tensor> idx;    // int64, wrapped to [0, size), broadcast to B
  std::vector<int64_t> dims;  // the dim of t each indexes, increasing
  DimVector broadcast;        // B
  bool adjacent = true;       // dims form one run: B takes their place
  std::vector<int64_t> perm;  // the indexed dims, then the others in order
  DimVector result;           // the indexed shape PyTorch gives t[indices]
};

AdvancedIndex advanced_index(const Tensor& t, TensorList indices, const char* op) {
  AdvancedIndex a;
  int64_t d = 0;
  for (const Tensor& i : indices) {
    if (!i.defined()) {
      ++d;
      continue;
    }
    if (i.dtype() == kBool || i.dtype() == kUInt8) {
      EMBER_CHECK_INDEX(d + i.dim() <= t.dim(), "{}: too many indices for tensor of dimension {} (got {})", op,
                        t.dim(), d + i.dim());
      for (int64_t c = 0; c < i.dim(); ++c)
        EMBER_CHECK_INDEX(i.size(c) == t.size(d + c),
                          "{}: The shape of the mask {} at index {} does not match the shape of the indexed tensor {} "
                          "at index {}",
                          op, shape_str(i.sizes()), c, shape_str(t.sizes()), d + c);
      Tensor nz = nonzero(i);
      for (int64_t c = 0; c < i.dim(); ++c) {
        a.idx.push_back(nz.select(1, c));
        a.dims.push_back(d++);
      }
    } else {
      EMBER_CHECK_TYPE(i.dtype() == kInt64 || i.dtype() == kInt32,
                       "{}: tensors used as indices must be long, int, byte or bool tensors, got {}", op,
                       to_string(i.dtype()));
      a.idx.push_back(i.to(kInt64));
      a.dims.push_back(d++);
    }
  }
  EMBER_CHECK_INDEX(d <= t.dim(), "{}: too many indices for tensor of dimension {} (got {})", op, t.dim(), d);
  EMBER_CHECK(!a.idx.empty(), "{}: at least one index must be a tensor (got {} full slices)", op, indices.size());
  std::vector<Tensor> b = broadcast_tensors(a.idx);
  for (size_t i = 0; i < b.size(); ++i) a.idx[i] = wrap_indices(b[i], t.size(a.dims[i]), a.dims[i], op);
  a.broadcast = DimVector(b[0].sizes());
  const auto k = static_cast<int64_t>(a.dims.size());
  a.adjacent = a.dims.back() - a.dims.front() == k - 1;
  a.perm = a.dims;
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < t.dim(); ++i)
    if (std::find(a.dims.begin(), a.dims.end(), i) == a.dims.end()) rest.push_back(i);
  a.perm.insert(a.perm.end(), rest.begin(), rest.end());
  auto append = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) a.result.push_back(t.size(i));
  };
  if (a.adjacent) append(0, a.dims.front());
  for (int64_t s : a.broadcast) a.result.push_back(s);
  if (a.adjacent) append(a.dims.back() + 1, t.dim());
  else
    for (int64_t i : rest) a.result.push_back(t.size(i));
  return a;
}

// The permuted tensor's leading dims as one: [prod of indexed sizes, rest...],
// and the linear index into it (shape B).
Tensor linear_index(const Tensor& permuted, const AdvancedIndex& a) {
  Tensor lin = zeros(a.broadcast, kInt64);
  for (size_t i = 0; i < a.idx.size(); ++i) lin = lin * permuted.size(static_cast<int64_t>(i)) + a.idx[i];
  return lin.reshape({-1});
}

DimVector flat_shape(const Tensor& permuted, size_t k) {
  DimVector shape{1};
  for (size_t i = 0; i < k; ++i) shape[0] *= permuted.size(static_cast<int64_t>(i));
  for (int64_t i = static_cast<int64_t>(k); i < permuted.dim(); ++i) shape.push_back(permuted.size(i));
  return shape;
}

// [B, sliced dims...] (the permuted order) <-> PyTorch's result order, which
// differs only when adjacent indexed dims sit after some sliced ones.
std::pair<std::vector<int64_t>, std::vector<int64_t>> b_block_moves(const AdvancedIndex& a) {
  std::vector<int64_t> front, at;
  for (int64_t i = 0; i < static_cast<int64_t>(a.broadcast.size()); ++i) {
    front.push_back(i);
    at.push_back(a.dims.front() + i);
  }
  return {front, at};
}

bool b_moves(const AdvancedIndex& a) { return a.adjacent && a.dims.front() > 0; }

void check_values_fit(const Tensor& values, const DimVector& indexed) {
  bool fits = values.dim() <= static_cast<int64_t>(indexed.size());
  for (int64_t i = 1; fits && i <= values.dim(); ++i) {
    const int64_t v = values.size(-i), want = indexed[indexed.size() - static_cast<size_t>(i)];
    fits = v == 1 || v == want;
  }
  EMBER_CHECK(fits,
              "index_put: shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
              shape_str(values.sizes()), shape_str(indexed));
}

}  // namespace

Tensor index(const Tensor& t, TensorList indices) {
  AdvancedIndex a = advanced_index(t, indices, "index");
  Tensor permuted = t.permute(a.perm);
  DimVector picked(a.broadcast);
  for (int64_t i = static_cast<int64_t>(a.dims.size()); i < permuted.dim(); ++i) picked.push_back(permuted.size(i));
  Tensor out = index_select(permuted.reshape(flat_shape(permuted, a.dims.size())), 0, linear_index(permuted, a))
                   .reshape(picked);
  if (!b_moves(a)) return out;
  auto [front, at] = b_block_moves(a);
  return movedim(out, front, at);
}

// t[indices] = values (+= with accumulate), Note [advanced indexing]; values
// broadcast to the indexed shape.
Tensor index_put(const Tensor& t, TensorList indices, const Tensor& values, bool accumulate) {
  EMBER_CHECK_TYPE(values.dtype() == t.dtype(),
                   "index_put: Index put requires the source and destination dtypes match, got {} for the "
                   "destination and {} for the source.",
                   to_string(t.dtype()), to_string(values.dtype()));
  AdvancedIndex a = advanced_index(t, indices, "index_put");
  check_values_fit(values, a.result);
  Tensor v = values.expand(a.result);
  if (b_moves(a)) {
    auto [front, at] = b_block_moves(a);
    v = movedim(v, at, front);
  }
  Tensor permuted = t.permute(a.perm);
  DimVector flat = flat_shape(permuted, a.dims.size()), vflat = flat;
  Tensor l = linear_index(permuted, a);
  vflat[0] = l.numel();
  Tensor rows = v.reshape(vflat), src = permuted.reshape(flat);
  Tensor out = accumulate ? index_add(src, 0, l, rows) : index_copy(src, 0, l, rows);
  std::vector<int64_t> back(a.perm.size());
  for (size_t i = 0; i < a.perm.size(); ++i) back[static_cast<size_t>(a.perm[i])] = static_cast<int64_t>(i);
  return out.reshape(permuted.sizes()).permute(back).contiguous();
}

Tensor masked_scatter(const Tensor& t, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK_TYPE(mask.dtype() == kBool || mask.dtype() == kUInt8,
                   "masked_scatter: expected BoolTensor for mask, got {}", to_string(mask.dtype()));
  EMBER_CHECK_TYPE(source.dtype() == t.dtype(), "masked_scatter: expected self and source to have same dtypes but got "
                   "{} and {}", to_string(t.dtype()), to_string(source.dtype()));
  DimVector shape = broadcast_shapes(t.sizes(), mask.sizes(), "masked_scatter");
  Tensor pos = nonzero(mask.to(kBool).expand(shape).reshape({-1})).reshape({-1});
  const int64_t m = pos.numel();
  EMBER_CHECK(source.numel() >= m, "masked_scatter: expected source to have at least {} elements (the mask's true "
              "count), got {} elements of shape {}", m, source.numel(), shape_str(source.sizes()));
  Tensor src = source.reshape({-1}).narrow(0, 0, m);
  return index_copy(t.expand(shape).reshape({-1}), 0, pos, src).reshape(shape);
}

Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  EMBER_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, got {}", reduce);
  EMBER_CHECK_TYPE(index.dtype() == kInt64, "scatter_reduce(): Expected dtype int64 for index, got {}",
                   to_string(index.dtype()));
  int64_t d = wrap_dim(dim, t.dim(), "scatter_reduce");
  Tensor hit = touched(t, d, index);  // also validates shapes and ranges (scatter's checks)
  if (reduce == "sum" || reduce == "mean") {
    Tensor zero = zeros({}, t.dtype());
    Tensor base = include_self ? t : where(hit, zero, t);
    Tensor total = scatter_add(base, d, index, src);
    if (reduce == "sum") return total;
    Tensor count = scatter_add(full(t.sizes(), include_self ? 1 : 0, t.dtype()), d, index,
                               ones(src.sizes(), t.dtype()));
    Tensor safe = where(hit, count, ones({}, t.dtype()));
    Tensor avg = is_floating_point(t.dtype()) ? total / safe : floor_divide(total, safe);
    return where(hit, avg, t);
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    out = scatter_reduce_host(t.detach(), d, index, src.detach(), reduce, include_self);
  }
  if (!any_requires_grad({&t, &src})) return out;
  SavedTensor st = save(t), ss = save(src), so = save_output(out);
  std::string red(reduce);
  record("ScatterReduceBackward0", {&t, &src}, {st, ss, so}, out,
         [st, ss, so, d, index, red, include_self](const variable_list& gs) -> variable_list {
           Tensor g = gs[0], self = st.unpack(), s = ss.unpack(), result = so.unpack();
           Tensor one = ones({}, self.dtype()), zero = zeros({}, self.dtype());
           if (red == "prod") {
             // PyTorch's formula: exclusive products that stay right when an
             // element is zero.
             Tensor masked_self = where(eq(self, 0), one, self);
             Tensor masked_self_result = scatter_reduce(masked_self, d, index, s, red, include_self);
             Tensor grad_self = g * masked_self_result / masked_self;
             Tensor src_zero = eq(s, 0);
             Tensor src_num_zeros = gather(scatter_add(zeros_like(self), d, index, src_zero.to(self.dtype())), d, index);
             Tensor single_zero = logical_and(src_zero, eq(src_num_zeros, 1));
             Tensor masked_src_result = scatter_reduce(self, d, index, where(single_zero, one, s), red, include_self);
             Tensor grad_src = where(single_zero, gather(g * masked_src_result, d, index),
                                     gather(g * result, d, index) / where(src_zero, one, s));
             if (!include_self) grad_self = where(touched(self, d, index), zero, g);
             return {grad_self, grad_src};
           }
           // amax / amin: the gradient is shared evenly by every element equal to the result.
           Tensor self_hit = eq(self, result).to(self.dtype());
           if (!include_self) self_hit = where(touched(self, d, index), zero, self_hit);
           Tensor src_hit = eq(s, gather(result, d, index)).to(self.dtype());
           Tensor count = scatter_add(self_hit, d, index, src_hit);
           Tensor grad_self = g * self_hit / count;
           if (!include_self) grad_self = where(touched(self, d, index), grad_self, g);
           return {grad_self, gather(g / count, d, index) * src_hit};
         });
  return out;
}

Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  int64_t d = wrap_dim(dim, t.dim(), "slice_scatter");
  Tensor out = t.detach().clone();
  Tensor part = slice(out, d, start, end, step);
  EMBER_CHECK(part.sizes().equals(src.sizes()),
              "slice_scatter: expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
              shape_str(src.sizes()), shape_str(part.sizes()));
  DimVector src_shape(src.sizes());
  {
    NoGradGuard no_grad;
    copy_(part, src);
  }
  if (any_requires_grad({&t, &src}))
    record("SliceScatterBackward0", {&t, &src}, out,
           [d, start, end, step, src_shape, dt = src.dtype()](const variable_list& g) -> variable_list {
             return {slice_scatter(g[0], zeros(src_shape, g[0].dtype()), d, start, end, step),
                     slice(g[0], d, start, end, step).to(dt)};
           });
  return out;
}

Tensor select_scatter(const Tensor& t, const Tensor& src, int64_t dim, int64_t index) {
  EMBER_CHECK_INDEX(t.dim() > 0, "select_scatter: cannot select from a 0-dim tensor");
  int64_t d = wrap_dim(dim, t.dim(), "select_scatter"), size = t.size(d);
  EMBER_CHECK_INDEX(index >= -size && index < size,
                    "select_scatter: index {} is out of bounds for dimension {} with size {}", index, d, size);
  if (index < 0) index += size;
  DimVector want(t.sizes());
  want.erase(d);
  EMBER_CHECK(src.sizes().equals(want),
              "select_scatter: expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
              shape_str(src.sizes()), shape_str(want));
  return slice_scatter(t, src.unsqueeze(d), d, index, index + 1, 1);
}

Tensor argwhere(const Tensor& t) { return nonzero(t); }

// ---- Tensor methods ----
Tensor Tensor::argwhere() const { return ember::argwhere(*this); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }
Tensor Tensor::take(const Tensor& index) const { return ember::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return ember::take_along_dim(*this, indices, dim);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return ember::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return ember::index_copy(*this, dim, index, source);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_put(TensorList indices, const Tensor& values, bool accumulate) const {
  return ember::index_put(*this, indices, values, accumulate);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return ember::masked_scatter(*this, mask, source);
}
Tensor Tensor::select_scatter(const Tensor& src, int64_t dim, int64_t index) const {
  return ember::select_scatter(*this, src, dim, index);
}
Tensor Tensor::slice_scatter(const Tensor& src, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                             int64_t step) const {
  return ember::slice_scatter(*this, src, dim, start, end, step);
}

// In-place forms: the out-of-place result copied into self (copy_ records
// the history and bumps the version).
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return copy_(ember::index_add(*this, dim, index, source, alpha));
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  return copy_(ember::index_copy(*this, dim, index, source));
}
Tensor& Tensor::index_put_(TensorList indices, const Tensor& values, bool accumulate) {
  return copy_(ember::index_put(*this, indices, values, accumulate));
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  Tensor r = ember::masked_scatter(*this, mask, source);
  EMBER_CHECK(r.sizes().equals(sizes()), "masked_scatter_: the mask {} broadcasts self {} to a larger shape {}",
              shape_str(mask.sizes()), shape_str(sizes()), shape_str(r.sizes()));
  return copy_(r);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self) {
  return copy_(ember::scatter_reduce(*this, dim, index, src, reduce, include_self));
}

}  // namespace ember

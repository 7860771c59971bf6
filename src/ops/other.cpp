// PyTorch's "Other operations" as composites: binning and counting
// (bincount, bucketize, searchsorted, histc), combinatorics (cartesian_prod,
// combinations, meshgrid, tril/triu_indices), diagonals (diag, diag_embed,
// diagonal, trace), cross, diff, tensordot, kron (cdist: distance.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/tensor_iter.h"
#include "ops/op_util.h"

namespace ember {
namespace {

Tensor triangle_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts, bool lower, const char* op) {
  EMBER_CHECK(row >= 0 && col >= 0, "{}: row and col must be non-negative, got row={}, col={}", op, row, col);
  std::vector<int64_t> rows, cols;
  for (int64_t r = 0; r < row; ++r)
    for (int64_t c = 0; c < col; ++c)
      if (lower ? c - r <= offset : c - r >= offset) {
        rows.push_back(r);
        cols.push_back(c);
      }
  const int64_t n = static_cast<int64_t>(rows.size());
  rows.insert(rows.end(), cols.begin(), cols.end());
  return tensor<int64_t>(rows, {2, n}).to(opts.dtype_or(kInt64));
}

}  // namespace

Tensor bincount(const Tensor& t, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK(t.dim() == 1 && is_integral(t.dtype(), false),
              "bincount only supports 1-d non-negative integral inputs, got {} of shape {}", to_string(t.dtype()),
              shape_str(t.sizes()));
  EMBER_CHECK(minlength >= 0, "bincount: minlength should be >= 0, got {}", minlength);
  std::vector<int64_t> v = t.to_vector<int64_t>();
  int64_t n = minlength;
  for (int64_t x : v) {
    EMBER_CHECK(x >= 0, "bincount only supports 1-d non-negative integral inputs, got value {}", x);
    n = std::max(n, x + 1);
  }
  Tensor idx = t.to(kInt64);
  if (!weights) return scatter_add(zeros({n}, kInt64), 0, idx, ones({t.numel()}, kInt64));
  EMBER_CHECK(weights->sizes().equals(t.sizes()), "bincount: weights should be 1-d and have the same length as input "
              "({} vs {})", shape_str(weights->sizes()), shape_str(t.sizes()));
  // PyTorch counts float32 weights in float32 and every other weight dtype in float64.
  ScalarType dt = weights->dtype() == kFloat32 ? kFloat32 : kFloat64;
  return scatter_add(zeros({n}, dt), 0, idx, weights->to(dt));
}

namespace {

// sorted_sequence in ascending order along its innermost dim: as given, or
// gathered through sorter (searchsorted's side/sorter checks, PyTorch's words).
Tensor sorted_by(const Tensor& seq, const std::optional<Tensor>& sorter) {
  if (!sorter) return seq;
  EMBER_CHECK_TYPE(sorter->dtype() == kInt64, "searchsorted: sorter must be a tensor of long dtype but got dtype {}",
                   to_string(sorter->dtype()));
  EMBER_CHECK(sorter->sizes().equals(seq.sizes()),
              "searchsorted: boundary and sorter must have the same size, but got boundary tensor {} and sorter "
              "tensor {}", shape_str(seq.sizes()), shape_str(sorter->sizes()));
  const int64_t m = seq.size(-1);
  for (int64_t i : sorter->to_vector<int64_t>())
    EMBER_CHECK(i >= 0 && i < m, "searchsorted: sorter index out of range: {} for a sequence of {} elements", i, m);
  return seq.gather(-1, *sorter);
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  EMBER_CHECK(sorted_sequence.dim() >= 1,
              "searchsorted: boundaries tensor should be at least 1-D, got a 0-dim tensor");
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "searchsorted: side can only be 'left' or 'right' but got '{}'",
                *side);
    EMBER_CHECK(!(right && *side == "left"),
                "searchsorted: side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  const Tensor seq = sorted_by(sorted_sequence, sorter);
  bool one_d = seq.dim() == 1;
  if (!one_d) {
    bool ok = seq.dim() == values.dim();
    for (int64_t i = 0; ok && i + 1 < seq.dim(); ++i) ok = seq.size(i) == values.size(i);
    EMBER_CHECK(ok, "searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                "boundaries tensor and input value tensor must match, but we got boundaries tensor {} and input "
                "value tensor {}", shape_str(seq.sizes()), shape_str(values.sizes()));
  }
  const int64_t m = seq.size(-1);
  std::vector<double> s = seq.to_vector<double>(), v = values.to_vector<double>();
  const int64_t per_row = values.dim() == 0 ? 1 : values.size(-1);
  std::vector<int64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double* row = s.data() + (one_d ? 0 : static_cast<int64_t>(i) / per_row * m);
    // NaN is larger than every number, as in sort.
    auto less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
    const double* pos = right ? std::upper_bound(row, row + m, v[i], less) : std::lower_bound(row, row + m, v[i], less);
    out[i] = pos - row;
  }
  Tensor result = tensor<int64_t>(out, {static_cast<int64_t>(out.size())}).reshape(values.sizes());
  return result.to(out_int32 ? kInt32 : kInt64);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  // The value keeps its own precision (3.5 into an int64 sequence stays 3.5).
  const ScalarType dt = value.is_floating_point() ? kFloat64 : value.is_bool() ? kBool : kInt64;
  return searchsorted(sorted_sequence, scalar_tensor(value, dt), out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "bucketize: boundaries tensor must be 1 dimension, but got dim({})",
              boundaries.dim());
  return searchsorted(boundaries, input, out_int32, right);
}

Tensor histc(const Tensor& t, int64_t bins, double min, double max) {
  EMBER_CHECK(is_floating_point(t.dtype()), "histc: expected a floating-point input, got {}", to_string(t.dtype()));
  EMBER_CHECK(bins > 0, "histc: bins must be > 0, but got {} for dimension 0", bins);
  std::vector<double> v = t.to_vector<double>();
  double lo = min, hi = max;
  if (lo == hi && !v.empty()) {
    lo = *std::min_element(v.begin(), v.end());
    hi = *std::max_element(v.begin(), v.end());
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  EMBER_CHECK(lo < hi && std::isfinite(lo) && std::isfinite(hi),
              "histc: range of [{}, {}] is not finite or max < min", lo, hi);
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  for (double x : v) {
    if (!(x >= lo && x <= hi)) continue;
    auto b = static_cast<int64_t>((x - lo) * static_cast<double>(bins) / (hi - lo));
    counts[static_cast<size_t>(std::min(b, bins - 1))] += 1;
  }
  return tensor<double>(counts, {bins}).to(t.dtype());
}

Tensor cartesian_prod(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "cartesian_prod: expects a non-empty TensorList");
  for (const Tensor& t : tensors)
    EMBER_CHECK(t.dim() == 1, "cartesian_prod: expect a 1D vector, but got shape {}", shape_str(t.sizes()));
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> cols;
  for (const Tensor& g : meshgrid(tensors, "ij")) cols.push_back(g.reshape({-1}));
  return stack(cols, 1);
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  EMBER_CHECK(t.dim() == 1, "combinations: Expect a 1D vector, but got shape {}", shape_str(t.sizes()));
  EMBER_CHECK(r >= 0, "combinations: Expect a non-negative number, but got {}", r);
  if (r == 0) return empty({0}, t.dtype());
  const int64_t n = t.size(0);
  // itertools.combinations(_with_replacement) order: odometer over sorted tuples.
  std::vector<std::vector<int64_t>> cols(static_cast<size_t>(r));
  std::vector<int64_t> c(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) c[i] = with_replacement ? 0 : i;
  auto valid = [&] { return n > 0 && c[r - 1] < n; };
  while (valid()) {
    for (int64_t i = 0; i < r; ++i) cols[i].push_back(c[i]);
    int64_t i = r - 1;
    // The rightmost position that can still grow.
    while (i >= 0 && c[i] >= (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++c[i];
    for (int64_t j = i + 1; j < r; ++j) c[j] = with_replacement ? c[i] : c[j - 1] + 1;
  }
  const int64_t count = static_cast<int64_t>(cols[0].size());
  std::vector<Tensor> picked;
  for (const auto& col : cols) picked.push_back(index_select(t, 0, tensor<int64_t>(col, {count})));
  return stack(picked, 1);
}

std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing) {
  EMBER_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  EMBER_CHECK(indexing == "ij" || indexing == "xy",
              "meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {}", indexing);
  std::vector<Tensor> ts(tensors.begin(), tensors.end());
  for (const Tensor& t : ts)
    EMBER_CHECK(t.dim() <= 1, "meshgrid: Expected 0D or 1D tensor in the tensor list but got shape {}",
                shape_str(t.sizes()));
  // "xy" is "ij" with the first two inputs swapped, and the first two outputs
  // swapped back.
  const bool swap = indexing == "xy" && ts.size() >= 2;
  if (swap) std::swap(ts[0], ts[1]);
  DimVector shape;
  for (const Tensor& t : ts) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    DimVector view(ts.size(), 1);
    view[i] = -1;
    out.push_back(ts[i].reshape(view).expand(shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  return triangle_indices(row, col, offset, opts, true, "tril_indices");
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  return triangle_indices(row, col, offset, opts, false, "triu_indices");
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  EMBER_CHECK(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of dimensions, got {} and {}",
              shape_str(a.sizes()), shape_str(b.sizes()));
  std::vector<Tensor> ab = broadcast_tensors({a, b});
  const Tensor &x = ab[0], &y = ab[1];
  int64_t d = -1;
  if (dim) {
    d = wrap_dim(*dim, x.dim(), "cross");
  } else {
    // torch.cross's default: the first dim of size 3.
    for (int64_t i = 0; i < x.dim() && d < 0; ++i)
      if (x.size(i) == 3) d = i;
    EMBER_CHECK(d >= 0, "cross: no dimension of size 3 in input {}", shape_str(x.sizes()));
  }
  EMBER_CHECK(x.dim() > 0 && x.size(d) == 3, "linalg.cross: inputs dimension {} must have length 3. Got {} and {}",
              d, a.dim() > 0 ? a.size(d) : 0, b.dim() > 0 ? b.size(d) : 0);
  Tensor x0 = x.select(d, 0), x1 = x.select(d, 1), x2 = x.select(d, 2);
  Tensor y0 = y.select(d, 0), y1 = y.select(d, 1), y2 = y.select(d, 2);
  return stack({x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0}, d);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  return t.diagonal(offset, dim1, dim2);
}

// The last dim scattered onto the offset diagonal of an [.., n, n] block,
// whose two dims then move to dim1 and dim2.
Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK(t.dim() >= 1, "diag_embed: expected a tensor with at least 1 dimension, got a 0-dim tensor");
  const int64_t out_dim = t.dim() + 1;
  int64_t d1 = wrap_dim(dim1, out_dim, "diag_embed"), d2 = wrap_dim(dim2, out_dim, "diag_embed");
  EMBER_CHECK(d1 != d2, "diag_embed: diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  const int64_t len = t.size(-1), n = len + std::abs(offset);
  std::vector<int64_t> pos(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) pos[i] = (i + std::max<int64_t>(-offset, 0)) * n + i + std::max<int64_t>(offset, 0);
  DimVector flat(t.sizes());
  flat.back() = n * n;
  Tensor index = tensor<int64_t>(pos, {len}).expand(t.sizes()).contiguous();
  Tensor block = scatter(zeros(flat, t.dtype()), -1, index, t);
  DimVector square(t.sizes());
  square.back() = n;
  square.push_back(n);
  return movedim(block.view(square), {-2, -1}, {d1, d2});
}

Tensor diag(const Tensor& t, int64_t diagonal) {
  EMBER_CHECK(t.dim() == 1 || t.dim() == 2, "diag(): Supports 1D or 2D tensors. Got {}D", t.dim());
  if (t.dim() == 1) return diag_embed(t, diagonal, 0, 1);
  return t.diagonal(diagonal, 0, 1).clone();
}

Tensor trace(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2, "trace: expected a matrix, but got tensor with dim {}", t.dim());
  return sum(t.diagonal(0, 0, 1));
}

Tensor diff(const Tensor& t, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  EMBER_CHECK(t.dim() >= 1, "diff expects input to be at least one-dimensional");
  EMBER_CHECK(n >= 0, "order must be non-negative but got {}", n);
  int64_t d = wrap_dim(dim, t.dim(), "diff");
  Tensor x = t;
  if (prepend || append) {
    std::vector<Tensor> parts;
    if (prepend) parts.push_back(*prepend);
    parts.push_back(t);
    if (append) parts.push_back(*append);
    x = cat(parts, d);
  }
  for (int64_t i = 0; i < n && x.size(d) > 0; ++i) {
    int64_t len = x.size(d) - 1;
    Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == kBool ? logical_xor(hi, lo) : hi - lo;
  }
  return n > 0 && x.is_same(t) ? x.clone() : x;
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  EMBER_CHECK(dims_a.size() == dims_b.size(), "tensordot: both dimension lists should have same length, got {} and {}",
              shape_str(dims_a), shape_str(dims_b));
  std::vector<bool> ca(static_cast<size_t>(a.dim()), false), cb(static_cast<size_t>(b.dim()), false);
  DimVector pa, pb, out_shape;
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = wrap_dim(dims_a[i], a.dim(), "tensordot"), db = wrap_dim(dims_b[i], b.dim(), "tensordot");
    EMBER_CHECK(a.size(da) == b.size(db),
                "tensordot: contracted dimensions need to match, but first has size {} in dim {} and second has "
                "size {} in dim {}", a.size(da), da, b.size(db), db);
    ca[da] = cb[db] = true;
    k *= a.size(da);
  }
  DimVector free_a, free_b;
  int64_t m = 1, n = 1;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (!ca[i]) {
      free_a.push_back(i);
      out_shape.push_back(a.size(i));
      m *= a.size(i);
    }
  for (int64_t i = 0; i < b.dim(); ++i)
    if (!cb[i]) {
      free_b.push_back(i);
      out_shape.push_back(b.size(i));
      n *= b.size(i);
    }
  pa = free_a;
  for (int64_t d : dims_a) pa.push_back(wrap_dim(d, a.dim(), "tensordot"));
  for (int64_t d : dims_b) pb.push_back(wrap_dim(d, b.dim(), "tensordot"));
  for (int64_t d : free_b) pb.push_back(d);
  Tensor am = a.permute(pa).reshape({m, k}), bm = b.permute(pb).reshape({k, n});
  return mm(am, bm).reshape(out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  EMBER_CHECK(dims >= 0 && dims <= a.dim() && dims <= b.dim(),
              "tensordot: expects dims >= 0 and no more than the inputs' ranks ({} and {}), got {}", a.dim(), b.dim(),
              dims);
  DimVector da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

// a [a0, a1, ..] as [a0, 1, a1, 1, ..] times b as [1, b0, 1, b1, ..], then
// each pair of dims merged.
Tensor kron(const Tensor& a, const Tensor& b) {
  const int64_t nd = std::max(a.dim(), b.dim());
  DimVector as, bs, out;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t sa = i < nd - a.dim() ? 1 : a.size(i - (nd - a.dim()));
    int64_t sb = i < nd - b.dim() ? 1 : b.size(i - (nd - b.dim()));
    as.push_back(sa);
    as.push_back(1);
    bs.push_back(1);
    bs.push_back(sb);
    out.push_back(sa * sb);
  }
  return (a.reshape(as) * b.reshape(bs)).reshape(out);
}

// ---- Tensor methods ----
Tensor Tensor::kron(const Tensor& o) const { return ember::kron(*this, o); }
Tensor Tensor::cross(const Tensor& o, std::optional<int64_t> dim) const { return ember::cross(*this, o, dim); }
Tensor Tensor::diag(int64_t diagonal) const { return ember::diag(*this, diagonal); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return ember::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::diff(int64_t n, int64_t dim) const { return ember::diff(*this, n, dim); }
Tensor Tensor::trace() const { return ember::trace(*this); }
Tensor Tensor::bincount(const std::optional<Tensor>& weights, int64_t minlength) const {
  return ember::bincount(*this, weights, minlength);
}
Tensor Tensor::histc(int64_t bins, double min, double max) const { return ember::histc(*this, bins, min, max); }

}  // namespace ember

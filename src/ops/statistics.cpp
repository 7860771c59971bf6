// Order statistics and NaN-aware reductions as composites: median,
// nanmedian, kthvalue, mode, quantile, nanquantile, nansum, nanmean, aminmax,
// count_nonzero, dist, std_mean, msort, unique, unique_consecutive.
//
// Note [selected values]: an op that picks one element per slice (median,
// kthvalue, mode) finds its index without recording anything, then reads the
// value with gather: the gradient reaches exactly the picked element, as
// PyTorch's value_selecting_reduction_backward does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "ops/op_util.h"

namespace ember {
namespace {

// Note [selected values]: values = t gathered at the (keepdim) index along d.
std::pair<Tensor, Tensor> select_at(const Tensor& t, int64_t d, Tensor index_keepdim, bool keepdim) {
  Tensor values = t.dim() == 0 ? t.clone() : gather(t, d, index_keepdim);
  if (t.dim() == 0) index_keepdim = index_keepdim.reshape({});
  if (!keepdim && t.dim() > 0) return {values.squeeze(d), index_keepdim.squeeze(d)};
  return {values, index_keepdim};
}

void check_selectable(const Tensor& t, int64_t d, const char* op) {
  EMBER_CHECK_INDEX(t.dim() == 0 || t.size(d) > 0,
                    "{}(): Expected reduction dim {} to have non-zero size (input shape {})", op, d,
                    shape_str(t.sizes()));
}

// The index of the k-th (0-based) smallest along d, keepdim shape; NaN is
// the largest value (sort's order). Stable for ties.
Tensor kth_index(const Tensor& t, int64_t d, const Tensor& k_keepdim) {
  Tensor order = sort(t.detach(), d, false, true).second;
  return gather(order, d, k_keepdim);
}

// A [.., 1, ..] shape: x's with dim d set to 1.
DimVector reduced_keepdim(const Tensor& x, int64_t d) {
  DimVector s(x.sizes());
  s[d] = 1;
  return s;
}

std::pair<Tensor, Tensor> median_impl(const Tensor& t, int64_t dim, bool keepdim, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  int64_t d = wrap_dim(dim, t.dim(), op);
  check_selectable(t, d, op);
  Tensor x = t.dim() == 0 ? t.reshape({1}) : t;
  Tensor index;
  {
    NoGradGuard no_grad;
    Tensor nan = isnan(x.detach());
    int64_t n = x.size(d);
    if (ignore_nan) {
      // The lower median of the non-NaN values; all NaN -> the first element
      // (NaN; PyTorch's index there is whatever its nth_element leaves).
      Tensor valid = sum(logical_not(nan), {d}, true);
      Tensor k = floor_divide(clamp_min(valid - 1, 0), 2);
      index = kth_index(x, d, k);
    } else {
      Tensor k = full(reduced_keepdim(x, d), (n - 1) / 2, kInt64);
      Tensor first_nan = argmax(nan.to(kInt64), d, true);
      index = where(any(nan, {d}, true), first_nan, kth_index(x, d, k));
    }
  }
  if (t.dim() == 0) return {t.clone(), index.reshape({})};
  return select_at(t, d, index, keepdim);
}

Tensor quantile_impl(const Tensor& t, const Tensor& q_in, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  EMBER_CHECK(is_floating_point(t.dtype()), "{}() input tensor must be either float or double dtype, got {}", op,
              to_string(t.dtype()));
  EMBER_CHECK(q_in.dtype() == t.dtype(), "{}() q tensor must be same dtype as the input tensor ({} vs {})", op,
              to_string(q_in.dtype()), to_string(t.dtype()));
  EMBER_CHECK(q_in.dim() <= 1, "{}() q must be a scalar or 1D tensor, got shape {}", op, shape_str(q_in.sizes()));
  EMBER_CHECK(t.numel() > 0, "quantile() input tensor must be non-empty, got shape {}", shape_str(t.sizes()));
  EMBER_CHECK(interpolation == "linear" || interpolation == "lower" || interpolation == "higher" ||
                  interpolation == "midpoint" || interpolation == "nearest",
              "{}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {}", op,
              interpolation);
  for (double v : q_in.to_vector<double>())
    EMBER_CHECK(v >= 0 && v <= 1, "{}() q values must be in the range [0, 1], got {}", op, v);
  // Sorted values along the last dim of x: [*kept, n].
  Tensor x;
  int64_t d = 0;
  if (dim) {
    d = wrap_dim(*dim, t.dim(), op);
    x = t.dim() == 0 ? t.reshape({1}) : movedim(t, d, -1);
  } else {
    x = t.reshape({-1});
  }
  const int64_t n = x.size(-1), nq = q_in.numel();
  DimVector out_shape;  // [Q, *kept] (keepdim: the reduced dims as 1)
  if (q_in.dim() == 1) out_shape.push_back(nq);
  if (dim && keepdim) {
    for (int64_t i = 0; i < t.dim(); ++i) out_shape.push_back(i == d ? 1 : t.size(i));
  } else if (dim) {
    for (int64_t i = 0; i < t.dim(); ++i)
      if (i != d) out_shape.push_back(t.size(i));
  } else if (keepdim) {
    out_shape.resize(out_shape.size() + static_cast<size_t>(t.dim()), 1);
  }
  if (n == 0) return full(out_shape, std::numeric_limits<double>::quiet_NaN(), TensorOptions(t.dtype()));
  Tensor sorted = sort(x, -1).first;
  DimVector qshape(static_cast<size_t>(x.dim() + 1), 1);
  qshape[0] = nq;
  Tensor q = q_in.detach().reshape(qshape);  // [Q, 1, ..., 1]
  Tensor rank;
  {
    NoGradGuard no_grad;
    Tensor nan = isnan(x.detach());
    Tensor last = full({}, static_cast<double>(n - 1), t.dtype());
    if (ignore_nan) {
      Tensor valid = sum(logical_not(nan), {-1}, true).to(t.dtype());  // [*kept, 1]
      rank = clamp_min(q * (valid - 1), 0);  // all NaN: rank 0, whose value is NaN
    } else {
      rank = where(any(nan, {-1}, true), last, q * static_cast<double>(n - 1));
    }
    if (interpolation == "lower") rank = floor(rank);
    else if (interpolation == "higher") rank = ceil(rank);
    else if (interpolation == "nearest") rank = round(rank);
  }
  DimVector expanded(rank.sizes());
  expanded.back() = n;
  Tensor table = sorted.unsqueeze(0).expand(expanded);
  Tensor lo_idx = floor(rank).to(kInt64), hi_idx = ceil(rank).to(kInt64);
  Tensor lo = gather(table, -1, lo_idx), hi = gather(table, -1, hi_idx);
  Tensor weight = interpolation == "midpoint" ? full({}, 0.5, t.dtype()) : rank - floor(rank);
  // lerp as PyTorch computes it (from the nearer end), for the same rounding.
  Tensor result = lo;
  if (interpolation == "linear" || interpolation == "midpoint")
    result = where(lt(weight, 0.5), lo + weight * (hi - lo), hi - (hi - lo) * (1.0 - weight));
  result = result.squeeze(-1);  // [Q, *kept]
  if (dim && keepdim && t.dim() > 0) result = movedim(result.unsqueeze(-1), -1, d + 1);
  if (q_in.dim() == 0) result = result.select(0, 0);
  return result.reshape(out_shape);
}

// Groups of equal consecutive rows of a [n, k] tensor: a bool [n] mask of
// each group's first row.
Tensor group_starts(const Tensor& rows) {
  const int64_t n = rows.size(0);
  if (n == 0) return empty({0}, kBool);
  Tensor differs = any(ne(rows.slice(0, 1), rows.slice(0, 0, n - 1)), {1});
  return cat({ones({1}, kBool), differs});
}

// (values, inverse, counts) from the rows of x [n, *] in the given order.
std::tuple<Tensor, Tensor, Tensor> groups(const Tensor& x, const Tensor& order) {
  const int64_t n = x.size(0);
  if (n == 0) return {x.clone(), empty({0}, kInt64), empty({0}, kInt64)};
  Tensor rows = index_select(x, 0, order);
  Tensor starts = group_starts(rows.reshape({n, -1}));
  Tensor group = sub(cumsum(starts.to(kInt64), 0), 1);  // group of each row in `order`
  Tensor inverse = zeros({n}, kInt64).scatter(0, order, group);
  Tensor first = nonzero(starts).reshape({-1});
  Tensor counts = diff(first, 1, 0, std::nullopt, full({1}, n, kInt64));
  return {index_select(rows, 0, first), inverse, counts};
}

// A stable order of the rows of x [n, *], lexicographic.
Tensor row_order(const Tensor& x) {
  const int64_t n = x.size(0);
  Tensor flat = x.reshape({n, -1});
  Tensor order = arange(n, kInt64);
  // Stable sorts from the last column to the first: a radix sort by columns.
  for (int64_t c = flat.size(1) - 1; c >= 0; --c) {
    Tensor col = index_select(flat.select(1, c), 0, order);
    order = index_select(order, 0, sort(col, 0, false, true).second);
  }
  return order;
}

}  // namespace

std::pair<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (dim) {
    int64_t d = wrap_dim(*dim, t.dim(), "aminmax");
    return {amin(t, {d}, keepdim), amax(t, {d}, keepdim)};
  }
  EMBER_CHECK(t.numel() > 0, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
              "identity (input shape {})", shape_str(t.sizes()));
  return {amin(t, {}, keepdim), amax(t, {}, keepdim)};
}

Tensor count_nonzero(const Tensor& t, IntArrayRef dims) { return sum(ne(t.detach(), 0), dims); }

Tensor dist(const Tensor& a, const Tensor& b, double p) { return norm(a - b, p); }

Tensor median(const Tensor& t) {
  if (t.numel() == 0) return full({}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(t.dtype()));
  return median_impl(t.reshape({-1}), 0, false, false).first;
}
std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  return median_impl(t, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& t) {
  if (t.numel() == 0) return full({}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(t.dtype()));
  return median_impl(t.reshape({-1}), 0, false, true).first;
}
std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim) {
  return median_impl(t, dim, keepdim, true);
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, t.dim(), "kthvalue");
  int64_t n = t.dim() == 0 ? 1 : t.size(d);
  EMBER_CHECK_INDEX(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension {}: k = {}, size {}",
                    d, k, n);
  if (t.dim() == 0) return {t.clone(), zeros({}, kInt64)};
  Tensor index;
  {
    NoGradGuard no_grad;
    index = kth_index(t, d, full(reduced_keepdim(t, d), k - 1, kInt64));
  }
  return select_at(t, d, index, keepdim);
}

// Per slice (dim moved last): the longest run in sorted order, the smaller
// value on ties; the index is the value's last position in the input.
std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, t.dim(), "mode");
  check_selectable(t, d, "mode");
  if (t.dim() == 0) return {t.clone(), zeros({}, kInt64)};
  Tensor x = movedim(t.detach(), d, -1).contiguous();
  const int64_t n = x.size(-1), rows = x.numel() / n;
  std::vector<double> v = x.to_vector<double>();
  std::vector<int64_t> idx(static_cast<size_t>(rows));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = v.data() + r * n;
    auto less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
    auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less(row[a], row[b]); });
    int64_t best = 0, best_len = 0;
    for (int64_t i = 0; i < n;) {
      int64_t j = i;
      while (j < n && same(row[order[j]], row[order[i]])) ++j;
      if (j - i > best_len) {
        best = i;
        best_len = j - i;
      }
      i = j;
    }
    idx[r] = order[best + best_len - 1];  // stable sort: the last of the run is the last position
  }
  DimVector kshape(x.sizes());
  kshape.back() = 1;
  Tensor index = movedim(tensor<int64_t>(idx, kshape), -1, d);
  return select_at(t, d, index.contiguous(), keepdim);
}

Tensor nansum(const Tensor& t, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  if (!is_floating_point(t.dtype())) return sum(t, dims, keepdim, dtype);
  return sum(where(isnan(t.detach()), zeros({}, t.dtype()), t), dims, keepdim, dtype);
}

Tensor nanmean(const Tensor& t, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK(is_floating_point(t.dtype()),
              "nanmean(): expected input to have floating point dtype but got {}", to_string(t.dtype()));
  Tensor count = sum(logical_not(isnan(t.detach())), dims, keepdim).to(t.dtype());
  return nansum(t, dims, keepdim) / count;
}

Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl(t, q, dim, keepdim, interpolation, false);
}
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) {
  return quantile_impl(t, scalar_tensor(q, t.dtype()), dim, keepdim, interpolation, false);
}
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(t, q, dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(t, scalar_tensor(q, t.dtype()), dim, keepdim, interpolation, true);
}

std::pair<Tensor, Tensor> std_mean(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  return {ember::std(t, dims, correction, keepdim), mean(t, dims, keepdim)};
}

Tensor msort(const Tensor& t) { return sort(t, 0).first; }

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool /*sorted*/, std::optional<int64_t> dim) {
  NoGradGuard no_grad;  // not differentiable, like PyTorch's
  if (!dim) {
    Tensor flat = t.detach().reshape({-1});
    auto [values, inverse, counts] = groups(flat, sort(flat, 0, false, true).second);
    return {values, inverse.reshape(t.sizes()), counts};
  }
  int64_t d = wrap_dim(*dim, t.dim(), "unique");
  // PyTorch's rules for zero-size dims: only the selected one may be 0.
  const auto zero_dims = std::count(t.sizes().begin(), t.sizes().end(), int64_t{0});
  if (t.size(d) == 0) {
    EMBER_CHECK(zero_dims == 1, "unique: Number of zero sized dimensions is more than one, so unique cannot be "
                "applied (shape {})", shape_str(t.sizes()));
    return {t.detach().clone(), empty({0}, kInt64), empty({0}, kInt64)};
  }
  EMBER_CHECK(zero_dims == 0, "unique: There are 0 sized dimensions, and they aren't selected, so unique cannot be "
              "applied (shape {}, dim {})", shape_str(t.sizes()), d);
  Tensor x = movedim(t.detach(), d, 0);
  auto [values, inverse, counts] = groups(x, row_order(x));
  return {movedim(values, 0, d), inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, std::optional<int64_t> dim) {
  NoGradGuard no_grad;
  Tensor x = dim ? movedim(t.detach(), wrap_dim(*dim, t.dim(), "unique_consecutive"), 0) : t.detach().reshape({-1});
  auto [values, inverse, counts] = groups(x, arange(x.size(0), kInt64));
  if (!dim) return {values, inverse.reshape(t.sizes()), counts};
  return {movedim(values, 0, wrap_dim(*dim, t.dim(), "unique_consecutive")), inverse, counts};
}

// ---- Tensor methods ----
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return ember::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return ember::amin(*this, dims, keepdim); }
std::pair<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::aminmax(*this, dim, keepdim);
}
Tensor Tensor::count_nonzero(IntArrayRef dims) const { return ember::count_nonzero(*this, dims); }
Tensor Tensor::dist(const Tensor& other, double p) const { return ember::dist(*this, other, p); }
Tensor Tensor::median() const { return ember::median(*this); }
std::pair<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return ember::median(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return ember::nanmedian(*this); }
std::pair<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return ember::nanmedian(*this, dim, keepdim);
}
std::pair<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const { return ember::mode(*this, dim, keepdim); }
Tensor Tensor::nansum(IntArrayRef dims, bool keepdim) const { return ember::nansum(*this, dims, keepdim); }
Tensor Tensor::nanmean(IntArrayRef dims, bool keepdim) const { return ember::nanmean(*this, dims, keepdim); }
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return ember::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return ember::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}
std::tuple<Tensor, Tensor, Tensor> Tensor::unique_consecutive(std::optional<int64_t> dim) const {
  return ember::unique_consecutive(*this, dim);
}
std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const { return ember::sort(*this, dim, descending); }
Tensor Tensor::argsort(int64_t dim, bool descending) const { return ember::argsort(*this, dim, descending); }
std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}
std::pair<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return ember::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::msort() const { return ember::msort(*this); }
std::tuple<Tensor, Tensor, Tensor> Tensor::unique(bool sorted, std::optional<int64_t> dim) const {
  return ember::unique(*this, sorted, dim);
}

}  // namespace ember

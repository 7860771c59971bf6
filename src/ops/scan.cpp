// Cumulative ops beside cumsum: cumprod, cummax, cummin, logcumsumexp. The
// forward is a plain loop over each slice (dim moved last) on the host; the
// derivatives are tensor formulas (PyTorch's), so they differentiate again.
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
#include "kernels/wrapping.h"
#include "ops/op_util.h"

namespace ember {
namespace {

// Runs step(row, n, out_values, out_indices) on each slice of t along d, in
// the element type T (double or int64_t); returns (values, indices) in t's
// layout, values in out_dtype.
template <typename T, typename Step>
std::pair<Tensor, Tensor> scan(const Tensor& t, int64_t d, ScalarType out_dtype, Step step) {
  Tensor x = t.dim() == 0 ? t.reshape({1}) : movedim(t.detach(), d, -1).contiguous();
  const int64_t n = x.size(-1), rows = n == 0 ? 0 : x.numel() / n;
  std::vector<T> v = x.to_vector<T>(), out(v.size());
  std::vector<int64_t> idx(v.size());
  for (int64_t r = 0; r < rows; ++r) step(v.data() + r * n, n, out.data() + r * n, idx.data() + r * n);
  Tensor values = tensor<T>(out, x.sizes()).to(out_dtype), indices = tensor<int64_t>(idx, x.sizes());
  if (t.dim() == 0) return {values.reshape({}), indices.reshape({})};
  return {movedim(values, -1, d).contiguous(), movedim(indices, -1, d).contiguous()};
}

Tensor reverse_cumsum(const Tensor& g, int64_t d) { return flip(cumsum(flip(g, {d}), d), {d}); }

// PyTorch's cumprod_backward: without zeros, a reversed cumsum of g * out
// divided by x; with zeros, sum_{j >= k} g_j prod_{i <= j, i != k} x_i from
// an [.., n, n] table (the cumprod of x with x_k replaced by 1, row k).
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, int64_t d) {
  if (x.numel() == 0 || x.dim() == 0) return g;
  bool has_zero = any(eq(x.detach(), 0)).item<bool>();
  if (!has_zero) return reverse_cumsum(g * out, d) / x;
  Tensor xl = movedim(x, d, -1), gl = movedim(g, d, -1);
  const int64_t n = xl.size(-1);
  Tensor eye_n = eye(n, std::nullopt, kBool);
  DimVector table_shape(xl.sizes());
  table_shape.insert(table_shape.size() - 1, n);  // [.., k, i]
  Tensor table = where(eye_n, ones({}, x.dtype()), xl.unsqueeze(-2).expand(table_shape));
  Tensor partial = cumprod(table, -1);  // [.., k, j] = prod_{i <= j, i != k} x_i
  Tensor upper = triu(ones({n, n}, x.dtype()));
  Tensor grad = sum(partial * upper * gl.unsqueeze(-2), {-1});
  return movedim(grad, -1, d);
}

std::pair<Tensor, Tensor> cum_extreme(const Tensor& t, int64_t dim, bool is_max) {
  const char* name = is_max ? "cummax" : "cummin";
  int64_t d = wrap_dim(dim, t.dim(), name);
  auto step = [is_max](const auto* x, int64_t n, auto* out, int64_t* idx) {
    if (n == 0) return;
    auto best = x[0];
    int64_t at = 0;
    for (int64_t j = 0; j < n; ++j) {
      auto v = x[j];
      bool nan_v = v != v, nan_best = best != best;
      // PyTorch's rule: a NaN takes over and stays; ties move the index forward.
      if (nan_v || (!nan_best && (is_max ? v >= best : v <= best))) {
        best = v;
        at = j;
      }
      out[j] = best;
      idx[j] = at;
    }
  };
  std::pair<Tensor, Tensor> r = is_floating_point(t.dtype()) ? scan<double>(t, d, t.dtype(), step)
                                                             : scan<int64_t>(t, d, t.dtype(), step);
  if (any_requires_grad({&t})) {
    Tensor values = r.first;
    record(is_max ? "CummaxBackward0" : "CumminBackward0", {&t}, values,
           [d, idx = r.second, in = DimVector(t.sizes())](const variable_list& g) -> variable_list {
             if (in.empty()) return {g[0]};
             return {scatter_add(zeros(in, g[0].dtype()), d, idx, g[0])};
           });
  }
  return r;
}

}  // namespace

Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  int64_t d = wrap_dim(dim, t.dim(), "cumprod");
  ScalarType dt = dtype ? *dtype : (is_integral(t.dtype(), true) ? kInt64 : t.dtype());
  EMBER_CHECK_TYPE(dt != kBool, "cumprod: dtype bool is not supported for the result (expected a numeric dtype)");
  Tensor x = t.dtype() == dt ? t : t.to(dt);
  auto step = [](const auto* v, int64_t n, auto* out, int64_t*) {
    auto acc = decltype(v[0] + v[0])(1);
    for (int64_t j = 0; j < n; ++j) out[j] = acc = wrapping_mul(acc, static_cast<decltype(acc)>(v[j]));
  };
  Tensor out = is_floating_point(dt) ? scan<double>(x, d, dt, step).first : scan<int64_t>(x, d, dt, step).first;
  if (any_requires_grad({&x})) {
    SavedTensor sx = save(x), so = save_output(out);
    record("CumprodBackward0", {&x}, {sx, so}, out, [sx, so, d](const variable_list& g) -> variable_list {
      return {cumprod_backward(g[0], sx.unpack(), so.unpack(), d)};
    });
  }
  return out;
}

std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, true); }
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, false); }

Tensor logcumsumexp(const Tensor& t, int64_t dim) {
  int64_t d = wrap_dim(dim, t.dim(), "logcumsumexp");
  EMBER_CHECK_TYPE(is_floating_point(t.dtype()), "logcumsumexp: expected a floating-point input, got {}",
                   to_string(t.dtype()));
  // A running logaddexp: exact where exp(x - max) would underflow.
  auto step = [](const double* v, int64_t n, double* out, int64_t*) {
    double acc = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      double a = acc, b = v[j];
      if (std::isnan(a) || std::isnan(b)) acc = std::numeric_limits<double>::quiet_NaN();
      else if (a == b) acc = a + std::log(2.0);  // also both -inf (stays -inf) or both +inf
      else acc = std::max(a, b) + std::log1p(std::exp(std::min(a, b) - std::max(a, b)));
      out[j] = acc;
    }
  };
  Tensor out = scan<double>(t, d, t.dtype(), step).first;
  if (any_requires_grad({&t})) {
    SavedTensor sx = save(t), so = save_output(out);
    record("LogcumsumexpBackward0", {&t}, {sx, so}, out, [sx, so, d](const variable_list& gs) -> variable_list {
      // PyTorch's formula: positive and negative parts of g in log space.
      Tensor g = gs[0], x = sx.unpack(), result = so.unpack();
      if (x.dim() == 0) return {g};
      auto reverse_lcse = [d](const Tensor& v) { return flip(logcumsumexp(flip(v, {d}), d), {d}); };
      Tensor lowest = full({}, std::numeric_limits<double>::lowest(), g.dtype());
      Tensor log_pos = where(gt(g, 0), log(g), lowest), log_neg = where(lt(g, 0), log(-g), lowest);
      return {exp(reverse_lcse(log_pos - result) + x) - exp(reverse_lcse(log_neg - result) + x)};
    });
  }
  return out;
}

// ---- Tensor methods ----
Tensor Tensor::cumprod(int64_t dim) const { return ember::cumprod(*this, dim); }
std::pair<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return ember::cummax(*this, dim); }
std::pair<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return ember::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return ember::logcumsumexp(*this, dim); }
// In place: the result (in self's dtype) copied into self.
Tensor& Tensor::cumsum_(int64_t dim) { return copy_(ember::cumsum(*this, dim, dtype())); }
Tensor& Tensor::cumprod_(int64_t dim) { return copy_(ember::cumprod(*this, dim, dtype())); }

}  // namespace ember

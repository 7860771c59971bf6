// avg_pool1d/3d, max_pool3d and adaptive_max_pool1d/2d as composites.
// Note [separable pooling]: a box window is a product of 1-D windows, so a
// max (or sum) over it is the max (sum) along one dim after another. Each
// 1-D stage pads the dim, slides the window with Tensor::unfold (a view) and
// reduces it; gradients come from amax / sum / max. The divisors of
// avg_pool are products of per-dim counts, as in PyTorch's kernels.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_util.h"
#include "ops/pool_nd.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {
namespace {

struct Geometry {
  std::vector<int64_t> k, s, p, d, out;
};

std::vector<int64_t> expand(const char* op, const char* name, IntArrayRef v, IntArrayRef fallback, int64_t nd) {
  if (v.empty()) v = fallback;
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd,
              "{}: {} must either be a single int, or a tuple of {} ints, got {}", op, name, nd, shape_str(v));
  std::vector<int64_t> out(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) out[i] = v[v.size() == 1 ? 0 : static_cast<size_t>(i)];
  return out;
}

// PyTorch's pooling_output_shape (see pool.cpp).
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks an (N, C, *) or (C, *) input with nd spatial dims and fills the geometry.
Geometry geometry(const char* op, const Tensor& x, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  EMBER_CHECK(x.dim() == nd + 1 || x.dim() == nd + 2, "{}: expected {}D or {}D input, got shape {}", op, nd + 1,
              nd + 2, shape_str(x.sizes()));
  Geometry g;
  g.k = expand(op, "kernel_size", kernel_size, kernel_size, nd);
  g.s = expand(op, "stride", stride, kernel_size, nd);
  g.p = expand(op, "padding", padding, padding, nd);
  g.d = expand(op, "dilation", dilation, dilation, nd);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t in = x.size(x.dim() - nd + i);
    EMBER_CHECK(in > 0, "{}: expected input to have non-zero size for non-batch dimensions, got {}", op,
                shape_str(x.sizes()));
    EMBER_CHECK(g.k[i] > 0 && g.s[i] > 0 && g.d[i] > 0,
                "{}: kernel_size, stride and dilation should be greater than zero, got {}, {} and {}", op,
                shape_str(g.k), shape_str(g.s), shape_str(g.d));
    EMBER_CHECK(g.p[i] >= 0 && g.p[i] <= g.k[i] / 2,
                "{}: pad should be at most half of effective kernel size, but got pad={}, kernel_size={}", op,
                shape_str(g.p), shape_str(g.k));
    int64_t o = pooled_size(in, g.k[i], g.p[i], g.s[i], g.d[i], ceil_mode);
    EMBER_CHECK(o > 0, "{}: Given input size {}, calculated output size is too small (kernel_size={}, padding={})",
                op, shape_str(x.sizes()), shape_str(g.k), shape_str(g.p));
    g.out.push_back(o);
  }
  return g;
}

// The windows along dim d: [..., out (at the last dim's place), k] with dim
// d moved last. The dim is padded by p on the left (with `fill`) and to the
// last window's end on the right (ceil_mode may need more than p).
Tensor windows_along(const Tensor& x, int64_t d, int64_t k, int64_t s, int64_t p, int64_t dil, int64_t out,
                     double fill) {
  int64_t in = x.size(d), span = dil * (k - 1) + 1;
  int64_t right = (out - 1) * s + span - in - p;
  Tensor w = pad(x.transpose(d, -1), {p, right}, "constant", fill).unfold(-1, span, s);
  return dil > 1 ? w.slice(-1, 0, std::nullopt, dil) : w;
}

// Divisors of avg_pool along one dim (PyTorch's pool_size rule).
std::vector<double> avg_counts(int64_t in, int64_t k, int64_t s, int64_t p, int64_t out, bool count_include_pad) {
  std::vector<double> c(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * s - p, end = std::min(start + k, in + p);
    int64_t size = end - start;
    if (!count_include_pad) size = std::min(end, in) - std::max<int64_t>(start, 0);
    c[o] = static_cast<double>(size);
  }
  return c;
}

}  // namespace

// PyTorch's CPU average pooling also takes int64, summing exactly and
// dividing with C's truncation toward zero (avg_pool2d of [-7, -2] is -4).
Tensor avg_pool_nd(const char* op, const Tensor& input, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride,
                   IntArrayRef padding, bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor) {
  EMBER_CHECK_TYPE(input.is_floating_point() || input.dtype() == kInt64,
                   "{}: expected a floating-point or int64 input, got {}", op, to_string(input.dtype()));
  Geometry g = geometry(op, input, nd, kernel_size, stride, padding, {1}, ceil_mode);
  EMBER_CHECK(!divisor || *divisor != 0, "{}: divisor must be not zero", op);
  Tensor x = input;
  Tensor denom;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = input.dim() - nd + i;
    x = sum(windows_along(x, d, g.k[i], g.s[i], g.p[i], 1, g.out[i], 0.0), {-1}).transpose(d, -1);
    if (divisor) continue;
    std::vector<double> c = avg_counts(input.size(d), g.k[i], g.s[i], g.p[i], g.out[i], count_include_pad);
    std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
    shape[static_cast<size_t>(d)] = g.out[i];
    Tensor ci = tensor<double>(c, {g.out[i]}, TensorOptions(kFloat64)).view(shape);
    denom = denom.defined() ? denom * ci : ci;
  }
  if (!input.is_floating_point()) {
    return divisor ? div(x, Scalar(*divisor), "trunc") : div(x, denom.to(kInt64), "trunc");
  }
  if (divisor) return x / static_cast<double>(*divisor);
  return x / denom.to(x.dtype());
}

namespace {

// Adaptive max along dim d: (values, source index along d). Windows are
// gathered into a [out, kmax] block, short windows repeating their last
// element (a repeat never changes the max, and max keeps the first hit).
std::pair<Tensor, Tensor> adaptive_max_along(const Tensor& x, int64_t d, int64_t out) {
  int64_t in = x.size(d), kmax = 0;
  for (int64_t o = 0; o < out; ++o)
    kmax = std::max(kmax, ((o + 1) * in + out - 1) / out - o * in / out);
  std::vector<int64_t> idx, starts;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * in / out, end = ((o + 1) * in + out - 1) / out;
    starts.push_back(start);
    for (int64_t j = 0; j < kmax; ++j) idx.push_back(std::min(start + j, end - 1));
  }
  Tensor block = index_select(x, d, tensor<int64_t>(idx, {out * kmax}, TensorOptions(kInt64))).unflatten(d, {out, kmax});
  auto [values, within] = max(block, d + 1);
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(d)] = out;
  return {values, within + tensor<int64_t>(starts, {out}, TensorOptions(kInt64)).view(shape)};
}

void check_adaptive(const char* op, const Tensor& x, int64_t nd, IntArrayRef output_size) {
  EMBER_CHECK(x.dim() == nd + 1 || x.dim() == nd + 2, "{}: expected {}D or {}D input, got shape {}", op, nd + 1,
              nd + 2, shape_str(x.sizes()));
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == nd || output_size.size() == 1,
              "{}: output_size must have {} values, got {}", op, nd, shape_str(output_size));
  for (int64_t i = x.dim() - nd; i < x.dim(); ++i)
    EMBER_CHECK(x.size(i) > 0, "{}: expected input to have non-zero size for non-batch dimensions, got {}", op,
                shape_str(x.sizes()));
  for (int64_t o : output_size)
    EMBER_CHECK(o > 0, "{}: output_size must be positive, got {}", op, shape_str(output_size));
}

}  // namespace

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  return avg_pool_nd("avg_pool1d", input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     std::nullopt);
}

Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool3d", input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override);
}

Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool3d";
  EMBER_CHECK_TYPE(input.is_floating_point(), "{}: expected a floating-point input, got {}", op,
                   to_string(input.dtype()));
  Geometry g = geometry(op, input, 3, kernel_size, stride, padding, dilation, ceil_mode);
  Tensor x = input;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < 3; ++i) {
    int64_t d = input.dim() - 3 + i;
    x = amax(windows_along(x, d, g.k[i], g.s[i], g.p[i], g.d[i], g.out[i], neg_inf), {-1}).transpose(d, -1);
  }
  return x;
}

std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input, IntArrayRef output_size) {
  check_adaptive("adaptive_max_pool1d", input, 1, output_size);
  return adaptive_max_along(input, input.dim() - 1, output_size[0]);
}

Tensor adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size) {
  return adaptive_max_pool1d_with_indices(input, output_size).first;
}

std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, IntArrayRef output_size) {
  check_adaptive("adaptive_max_pool2d", input, 2, output_size);
  int64_t dh = input.dim() - 2, dw = input.dim() - 1, w = input.size(dw);
  int64_t oh = output_size[0], ow = output_size[output_size.size() - 1];
  // Columns first, then rows: the row-major first maximum of each window,
  // like PyTorch's scan.
  auto [vw, iw] = adaptive_max_along(input, dw, ow);
  auto [v, ih] = adaptive_max_along(vw, dh, oh);
  Tensor col = gather(iw, dh, ih);
  return {v, ih * w + col};
}

Tensor adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return adaptive_max_pool2d_with_indices(input, output_size).first;
}

}  // namespace ember

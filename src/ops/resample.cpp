// interpolate, adaptive_avg_pool1d/3d, pixel_shuffle/unshuffle, affine_grid
// and grid_sample as composites. Note [separable resampling]: every
// interpolate mode is a product of 1-D filters, so the input is resampled one
// spatial dim at a time: nearest is one index_select, linear two taps and
// bicubic four (index_select times a weight per output position), area a
// [out, in] averaging matrix. Source indices and weights follow PyTorch 1.13's
// UpSample.h formulas exactly (including its float arithmetic for nearest),
// so the results match to rounding.
#include "ember/ops/resample.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "ops/op_util.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {
namespace {

Tensor index_tensor(const std::vector<int64_t>& v) {
  return tensor<int64_t>(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64));
}

// Per-position weights [1, .., n (at dim d), .., 1] in x's dtype.
Tensor weights_along(const std::vector<double>& w, const Tensor& x, int64_t d) {
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(d)] = static_cast<int64_t>(w.size());
  return tensor<double>(w, {static_cast<int64_t>(w.size())}, TensorOptions(kFloat64)).to(x.dtype()).view(shape);
}

// sum_k x[idx_k] * w_k along dim d.
Tensor taps_along(const Tensor& x, int64_t d, const std::vector<std::vector<int64_t>>& idx,
                  const std::vector<std::vector<double>>& w) {
  Tensor out;
  for (size_t k = 0; k < idx.size(); ++k) {
    Tensor term = index_select(x, d, index_tensor(idx[k])) * weights_along(w[k], x, d);
    out = out.defined() ? out + term : term;
  }
  return out;
}

// y = M x along dim d, M [out, in] row-major: a matmul, so autograd is matmul's.
Tensor matrix_along(const Tensor& x, int64_t d, const std::vector<double>& m, int64_t out) {
  Tensor mat = tensor<double>(m, {out, x.size(d)}, TensorOptions(kFloat64)).to(x.dtype());
  return matmul(x.transpose(d, -1), mat.t()).transpose(d, -1);
}

// Output i averages input [floor(i * in / out), ceil((i + 1) * in / out)):
// an [out, in] matrix applied along dim d.
Tensor adaptive_avg_along(const Tensor& x, int64_t d, int64_t out) {
  int64_t in = x.size(d);
  std::vector<double> m(static_cast<size_t>(out * in), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * in / out, end = ((o + 1) * in + out - 1) / out;
    for (int64_t i = start; i < end; ++i) m[static_cast<size_t>(o * in + i)] = 1.0 / static_cast<double>(end - start);
  }
  return matrix_along(x, d, m, out);
}

Tensor adaptive_avg_pool(const Tensor& input, IntArrayRef output_size, int64_t nsp, const char* op) {
  EMBER_CHECK(input.dim() == nsp + 1 || input.dim() == nsp + 2, "{}: expected {}D or {}D input, got shape {}", op,
              nsp + 1, nsp + 2, shape_str(input.sizes()));
  EMBER_CHECK_TYPE(input.is_floating_point(), "{}: expected a floating-point input, got {}", op,
                   to_string(input.dtype()));
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == nsp || output_size.size() == 1,
              "{}: output_size must have {} values, got {}", op, nsp, shape_str(output_size));
  Tensor x = input;
  int64_t first = input.dim() - nsp;
  for (int64_t i = 0; i < nsp; ++i) {
    int64_t d = first + i, out = output_size[output_size.size() == 1 ? 0 : static_cast<size_t>(i)];
    EMBER_CHECK(out >= 0, "{}: output_size must be non-negative, got {}", op, shape_str(output_size));
    EMBER_CHECK(x.size(d) > 0 || x.numel() == 0,
                "{}: expected input with non-zero spatial sizes, got shape {}", op, shape_str(input.sizes()));
    x = adaptive_avg_along(x, d, out);
  }
  return x;
}

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

// PyTorch's area_pixel_compute_scale / area_pixel_compute_source_index.
double pixel_scale(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  if (align) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}
double source_index(double scale, int64_t dst, bool align, bool cubic) {
  if (align) return scale * static_cast<double>(dst);
  double src = scale * (static_cast<double>(dst) + 0.5) - 0.5;
  return !cubic && src < 0 ? 0.0 : src;
}

// Antialiased bilinear / bicubic (PyTorch's _upsample_*2d_aa, PIL's
// resampling): when shrinking, the filter (triangle, or Keys' cubic with
// a = -0.5) is stretched by the scale, so every input pixel contributes;
// each output's taps are normalised to sum to 1.
Tensor antialias_along(const Tensor& x, int64_t d, int64_t out, double scale, bool cubic) {
  const int64_t in = x.size(d);
  auto filter = [cubic](double t) {
    t = std::fabs(t);
    if (!cubic) return t < 1 ? 1 - t : 0.0;
    const double a = -0.5;
    return t < 1 ? cubic1(t, a) : t < 2 ? cubic2(t, a) : 0.0;
  };
  const double half = cubic ? 2.0 : 1.0;
  const double support = scale >= 1 ? half * scale : half;
  const double invscale = scale >= 1 ? 1 / scale : 1.0;
  std::vector<double> m(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    double total = 0;
    for (int64_t j = lo; j < hi; ++j) total += filter((static_cast<double>(j) - center + 0.5) * invscale);
    for (int64_t j = lo; j < hi; ++j) {
      const double w = filter((static_cast<double>(j) - center + 0.5) * invscale);
      m[static_cast<size_t>(i * in + j)] = total != 0 ? w / total : w;
    }
  }
  return matrix_along(x, d, m, out);
}

Tensor resample_along(const Tensor& x, int64_t d, int64_t out, std::optional<double> scale,
                      const std::string& mode, bool align, bool antialias) {
  if (antialias) return antialias_along(x, d, out, pixel_scale(x.size(d), out, align, scale), mode == "bicubic");
  int64_t in = x.size(d);
  if (mode == "nearest" || mode == "nearest-exact") {
    // PyTorch computes these in float: the same float rounding picks the same neighbours.
    float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                  : static_cast<float>(in) / static_cast<float>(out);
    std::vector<int64_t> idx(static_cast<size_t>(out));
    for (int64_t j = 0; j < out; ++j) {
      if (mode == "nearest-exact")
        idx[j] = std::min(static_cast<int64_t>(std::floor((static_cast<float>(j) + 0.5f) * s)), in - 1);
      else if (out == in)
        idx[j] = j;
      else if (out == 2 * in)
        idx[j] = j >> 1;
      else
        idx[j] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(j) * s)), in - 1);
    }
    return index_select(x, d, index_tensor(idx));
  }
  if (mode == "area") return adaptive_avg_along(x, d, out);
  double s = pixel_scale(in, out, align, scale);
  if (mode == "bicubic") {
    const double a = -0.75;
    std::vector<std::vector<int64_t>> idx(4, std::vector<int64_t>(static_cast<size_t>(out)));
    std::vector<std::vector<double>> w(4, std::vector<double>(static_cast<size_t>(out)));
    for (int64_t j = 0; j < out; ++j) {
      double real = source_index(s, j, align, true);
      int64_t i0 = static_cast<int64_t>(std::floor(real));
      double t = real - static_cast<double>(i0);
      double c[4] = {cubic2(t + 1, a), cubic1(t, a), cubic1(1 - t, a), cubic2(2 - t, a)};
      for (int k = 0; k < 4; ++k) {
        idx[k][j] = std::clamp<int64_t>(i0 - 1 + k, 0, in - 1);
        w[k][j] = c[k];
      }
    }
    return taps_along(x, d, idx, w);
  }
  // linear, bilinear, trilinear: two taps per output position.
  std::vector<std::vector<int64_t>> idx(2, std::vector<int64_t>(static_cast<size_t>(out)));
  std::vector<std::vector<double>> w(2, std::vector<double>(static_cast<size_t>(out)));
  for (int64_t j = 0; j < out; ++j) {
    if (out == in) {
      idx[0][j] = idx[1][j] = j;
      w[0][j] = 1;
      w[1][j] = 0;
      continue;
    }
    double real = source_index(s, j, align, false);
    int64_t i0 = static_cast<int64_t>(real);
    double l1 = std::min(std::max(real - static_cast<double>(i0), 0.0), 1.0);
    idx[0][j] = i0;
    idx[1][j] = i0 + (i0 < in - 1 ? 1 : 0);
    w[0][j] = 1 - l1;
    w[1][j] = l1;
  }
  return taps_along(x, d, idx, w);
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateOptions& o) {
  const std::string& mode = o.mode;
  const bool interpolating = mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
  EMBER_CHECK(interpolating || mode == "nearest" || mode == "nearest-exact" || mode == "area",
              "interpolate: unsupported mode '{}' (expected nearest, nearest-exact, linear, bilinear, bicubic, "
              "trilinear or area)",
              mode);
  int64_t nsp = input.dim() - 2;
  EMBER_CHECK(nsp >= 1 && nsp <= 3,
              "interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: "
              "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})",
              input.dim(), mode);
  EMBER_CHECK(interpolating || !o.align_corners,
              "interpolate: align_corners option can only be set with the interpolating modes: linear | bilinear | "
              "bicubic | trilinear (got mode '{}')",
              mode);
  int64_t need = mode == "linear" ? 1 : (mode == "bilinear" || mode == "bicubic") ? 2 : mode == "trilinear" ? 3 : nsp;
  EMBER_CHECK(need == nsp, "interpolate: Got {}D input, but {} mode needs {}D input", input.dim(), mode, need + 2);
  EMBER_CHECK(!o.antialias || ((mode == "bilinear" || mode == "bicubic") && input.dim() == 4),
              "interpolate: Anti-alias option is only supported for bilinear and bicubic modes (4-D input), got mode "
              "'{}' and {}-D input",
              mode, input.dim());
  EMBER_CHECK(o.size.empty() != o.scale_factor.empty(), "interpolate: {}",
              o.size.empty() ? "either size or scale_factor should be defined"
                             : "only one of size or scale_factor should be defined");
  EMBER_CHECK(!(o.recompute_scale_factor.value_or(false) && !o.size.empty()),
              "interpolate: recompute_scale_factor is not meaningful with an explicit size.");
  EMBER_CHECK(!interpolating || mode == "nearest" || input.is_floating_point(),
              "interpolate: mode '{}' needs a floating-point input, got {}", mode, to_string(input.dtype()));
  EMBER_CHECK(mode != "area" || input.is_floating_point(), "interpolate: mode 'area' needs a floating-point input, got {}",
              to_string(input.dtype()));
  const bool recompute = o.recompute_scale_factor.value_or(false) || mode == "area";
  auto pick = [nsp](const auto& v, int64_t i, const char* what, IntArrayRef in_sizes) {
    EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nsp,
                "interpolate: Input and {} must have the same number of spatial dimensions, but got input with "
                "spatial dimensions of {} and {} of {} values",
                what, shape_str(in_sizes), what, v.size());
    return v[v.size() == 1 ? 0 : static_cast<size_t>(i)];
  };
  Tensor x = input;
  std::vector<int64_t> spatial(input.sizes().begin() + 2, input.sizes().end());
  for (int64_t i = 0; i < nsp; ++i) {
    int64_t d = i + 2, in = input.size(d), out;
    std::optional<double> scale;
    if (!o.size.empty()) {
      out = pick(o.size, i, "output size", spatial);
    } else {
      double f = pick(o.scale_factor, i, "scale_factor", spatial);
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * f));
      if (!recompute) scale = f;
    }
    EMBER_CHECK(in > 0 && out > 0,
                "interpolate: Input and output sizes should be greater than 0, but got input ({}) and output ({})",
                shape_str(spatial), out);
    x = resample_along(x, d, out, scale, mode, o.align_corners.value_or(false), o.antialias);
  }
  return x;
}

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  return adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d");
}

Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size) {
  return adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d");
}

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  EMBER_CHECK(input.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with {} "
              "dimension(s)", input.dim());
  EMBER_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got {}", r);
  int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  EMBER_CHECK(c % (r * r) == 0,
              "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
              "upscale_factor, but input.size(-3)={} is not divisible by {}",
              c, r * r);
  std::vector<int64_t> batch(input.sizes().begin(), input.sizes().end() - 3);
  int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> split = batch, out = batch;
  for (int64_t v : {c / (r * r), r, r, h, w}) split.push_back(v);
  for (int64_t v : {c / (r * r), h * r, w * r}) out.push_back(v);
  // (*, C, r, r, H, W) -> (*, C, H, r, W, r)
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : {0, 3, 1, 4, 2}) perm.push_back(nb + v);
  return input.reshape(split).permute(perm).reshape(out);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  EMBER_CHECK(input.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with {} "
              "dimension(s)", input.dim());
  EMBER_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got {}", r);
  int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  EMBER_CHECK(h % r == 0 && w % r == 0,
              "pixel_unshuffle expects height and width to be divisible by downscale_factor, but input.size(-2)={} "
              "and input.size(-1)={} are not divisible by {}",
              h, w, r);
  std::vector<int64_t> batch(input.sizes().begin(), input.sizes().end() - 3);
  int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> split = batch, out = batch;
  for (int64_t v : {c, h / r, r, w / r, r}) split.push_back(v);
  for (int64_t v : {c * r * r, h / r, w / r}) out.push_back(v);
  // (*, C, H, r, W, r) -> (*, C, r, r, H, W)
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : {0, 2, 4, 1, 3}) perm.push_back(nb + v);
  return input.reshape(split).permute(perm).reshape(out);
}

namespace {
// PyTorch's linspace_from_neg_one: n points in [-1, 1], shrunk by (n-1)/n
// without align_corners; a single point is 0.
Tensor base_coords(int64_t n, bool align, ScalarType dtype) {
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  if (n > 1)
    for (int64_t i = 0; i < n; ++i) {
      double c = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
      v[i] = align ? c : c * static_cast<double>(n - 1) / static_cast<double>(n);
    }
  return tensor<double>(v, {n}, TensorOptions(kFloat64)).to(dtype);
}
}  // namespace

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  EMBER_CHECK_TYPE(theta.is_floating_point(), "affine_grid: expected theta to be floating point, got {}",
                   to_string(theta.dtype()));
  EMBER_CHECK(size.size() == 4 || size.size() == 5,
              "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {}.",
              shape_str(size));
  int64_t nsp = static_cast<int64_t>(size.size()) - 2;
  EMBER_CHECK(theta.dim() == 3 && theta.size(1) == nsp && theta.size(2) == nsp + 1 && theta.size(0) == size[0],
              "affine_grid: Expected a batch of {}D affine matrices of shape Nx{}x{} for size {}. Got {}.", nsp, nsp,
              nsp + 1, shape_str(size), shape_str(theta.sizes()));
  // base [*spatial, nsp + 1] = (x, y[, z], 1) with x along the last dim.
  std::vector<int64_t> sp(size.begin() + 2, size.end());
  std::vector<Tensor> comps;
  for (int64_t k = 0; k < nsp; ++k) {
    int64_t d = nsp - 1 - k;  // x varies along the last spatial dim
    std::vector<int64_t> shape(static_cast<size_t>(nsp), 1);
    shape[static_cast<size_t>(d)] = sp[static_cast<size_t>(d)];
    comps.push_back(base_coords(sp[static_cast<size_t>(d)], align_corners, theta.dtype()).view(shape).expand(sp));
  }
  comps.push_back(ones(sp, TensorOptions(theta.dtype())));
  Tensor base = stack(comps, -1).reshape({1, -1, nsp + 1});
  std::vector<int64_t> out{size[0]};
  for (int64_t s : sp) out.push_back(s);
  out.push_back(nsp);
  return matmul(base, theta.transpose(1, 2)).view(out);
}

namespace {
// Grid coordinate in [-1, 1] -> pixel coordinate.
Tensor unnormalize(const Tensor& c, int64_t size, bool align) {
  double s = static_cast<double>(size);
  return align ? (c + 1) * ((s - 1) / 2) : ((c + 1) * s - 1) / 2;
}

// Reflects x into [low, high] (both given doubled, as in PyTorch).
Tensor reflect(const Tensor& x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  double lo = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  Tensor a = abs(x - lo);
  Tensor flips = floor(a / span);
  Tensor extra = a - flips * span;
  Tensor even = eq(remainder(flips, 2.0), 0.0);
  return where(even, extra + lo, (span - extra) + lo);
}

// PyTorch's compute_coordinates: a pixel coordinate under the padding mode.
Tensor source_coord_from_pixel(Tensor x, int64_t size, const std::string& padding, bool align) {
  if (padding == "border") return clamp(x, 0.0, static_cast<double>(size - 1));
  if (padding == "reflection") {
    x = align ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    return clamp(x, 0.0, static_cast<double>(size - 1));
  }
  return x;
}

Tensor source_coord(const Tensor& c, int64_t size, const std::string& padding, bool align) {
  return source_coord_from_pixel(unnormalize(c, size, align), size, padding, align);
}

// PyTorch 1.13's volumetric CPU kernel is its scalar loop, whose
// grid_sampler_unnormalize rounds differently from the vectorised 2-D
// kernel's (c + 1) * ((s - 1) / 2): nearest sampling sees the difference
// where a coordinate lands on a half pixel.
Tensor source_coord_3d(const Tensor& c, int64_t size, const std::string& padding, bool align) {
  double s = static_cast<double>(size);
  Tensor pixel = align ? (c + 1) / 2 * (s - 1) : ((c + 1) * s - 1) / 2;
  return source_coord_from_pixel(pixel, size, padding, align);
}

// std::round: half-way cases away from zero (the volumetric kernel's
// nearest; the 2-D kernel's nearbyint rounds them to even). x - trunc(x)
// is exact, so no sum rounds a value just below a half up.
Tensor round_half_away(const Tensor& x) {
  Tensor whole = trunc(x);
  return where(ge(abs(x - whole), 0.5), whole + sign(x), whole);
}
}  // namespace

namespace {
// Whether pixel coordinates p lie inside [0, size - 1].
Tensor within(const Tensor& p, int64_t size) { return logical_and(ge(p, 0.0), le(p, static_cast<double>(size - 1))); }

// Volumetric grid_sample: input (N, C, D, H, W), grid (N, D_out, H_out, W_out,
// 3) of (x, y, z); trilinear ("bilinear") over the 8 corners, or nearest
// (rounding half-way cases away from zero, as PyTorch's volumetric kernel).
Tensor grid_sample_3d(const Tensor& input, const Tensor& grid, const std::string& mode,
                      const std::string& padding_mode, bool align) {
  const char* op = "grid_sample";
  EMBER_CHECK(mode != "bicubic", "{}: bicubic interpolation only supports 4D input", op);
  EMBER_CHECK(grid.dim() == 5 && grid.size(0) == input.size(0) && grid.size(4) == 3,
              "{}: expected grid of shape [{}, D_out, H_out, W_out, 3] for input {}, got {}", op, input.size(0),
              shape_str(input.sizes()), shape_str(grid.sizes()));
  const int64_t n = input.size(0), c = input.size(1), d = input.size(2), h = input.size(3), w = input.size(4);
  const int64_t dout = grid.size(1), ho = grid.size(2), wo = grid.size(3);
  Tensor ix = source_coord_3d(grid.select(4, 0), w, padding_mode, align);  // [N, Do, Ho, Wo]
  Tensor iy = source_coord_3d(grid.select(4, 1), h, padding_mode, align);
  Tensor iz = source_coord_3d(grid.select(4, 2), d, padding_mode, align);
  Tensor flat_in = input.reshape({n, c, d * h * w});
  auto sample = [&](const Tensor& px, const Tensor& py, const Tensor& pz) {
    Tensor inside = logical_and(logical_and(within(px, w), within(py, h)), within(pz, d));
    Tensor cx = clamp(px, 0.0, static_cast<double>(w - 1)).to(kInt64);
    Tensor cy = clamp(py, 0.0, static_cast<double>(h - 1)).to(kInt64);
    Tensor cz = clamp(pz, 0.0, static_cast<double>(d - 1)).to(kInt64);
    Tensor idx = ((cz * h + cy) * w + cx).reshape({n, 1, dout * ho * wo}).expand({n, c, dout * ho * wo});
    return gather(flat_in, 2, idx).view({n, c, dout, ho, wo}) * inside.unsqueeze(1).to(input.dtype());
  };
  if (mode == "nearest") return sample(round_half_away(ix).detach(), round_half_away(iy).detach(),
                                       round_half_away(iz).detach());
  Tensor x0 = floor(ix).detach(), y0 = floor(iy).detach(), z0 = floor(iz).detach();
  const std::array<Tensor, 2> xs{x0, x0 + 1}, ys{y0, y0 + 1}, zs{z0, z0 + 1};
  const std::array<Tensor, 2> wx{x0 + 1 - ix, ix - x0}, wy{y0 + 1 - iy, iy - y0}, wz{z0 + 1 - iz, iz - z0};
  Tensor out;
  for (size_t k = 0; k < 2; ++k)
    for (size_t j = 0; j < 2; ++j)
      for (size_t i = 0; i < 2; ++i) {
        Tensor term = sample(xs[i], ys[j], zs[k]) * (wx[i] * wy[j] * wz[k]).unsqueeze(1);
        out = out.defined() ? out + term : term;
      }
  return out;
}
}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, const std::string& mode, const std::string& padding_mode,
                   std::optional<bool> align_corners) {
  const char* op = "grid_sample";
  EMBER_CHECK(mode == "bilinear" || mode == "nearest" || mode == "bicubic",
              "{}: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{}'", op, mode);
  EMBER_CHECK(padding_mode == "zeros" || padding_mode == "border" || padding_mode == "reflection",
              "{}: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{}'", op, padding_mode);
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5,
              "{}: expected 4D input (N, C, H, W) or 5D input (N, C, D, H, W), got shape {}", op,
              shape_str(input.sizes()));
  EMBER_CHECK_TYPE(input.is_floating_point() && grid.dtype() == input.dtype(),
                   "{}: expected input and grid of the same floating-point dtype, got {} and {}", op,
                   to_string(input.dtype()), to_string(grid.dtype()));
  if (input.dim() == 5) return grid_sample_3d(input, grid, mode, padding_mode, align_corners.value_or(false));
  EMBER_CHECK(grid.dim() == 4 && grid.size(0) == input.size(0) && grid.size(3) == 2,
              "{}: expected grid of shape [{}, H_out, W_out, 2] for input {}, got {}", op, input.size(0),
              shape_str(input.sizes()), shape_str(grid.sizes()));
  bool align = align_corners.value_or(false);
  int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  int64_t ho = grid.size(1), wo = grid.size(2);
  Tensor ix = source_coord(grid.select(3, 0), w, padding_mode, align);  // [N, Ho, Wo]
  Tensor iy = source_coord(grid.select(3, 1), h, padding_mode, align);
  Tensor flat_in = input.reshape({n, c, h * w});
  // The value at integer pixel (px, py), zero where it lies outside.
  auto sample = [&](const Tensor& px, const Tensor& py) {
    Tensor inside = logical_and(within(px, w), within(py, h));
    Tensor cx = clamp(px, 0.0, static_cast<double>(w - 1)).to(kInt64);
    Tensor cy = clamp(py, 0.0, static_cast<double>(h - 1)).to(kInt64);
    Tensor idx = (cy * w + cx).reshape({n, 1, ho * wo}).expand({n, c, ho * wo});
    Tensor v = gather(flat_in, 2, idx).view({n, c, ho, wo});
    return v * inside.unsqueeze(1).to(input.dtype());
  };
  if (mode == "nearest") {
    // Half-way cases round to even, as PyTorch's nearbyint.
    return sample(round(ix).detach(), round(iy).detach());
  }
  if (mode == "bicubic") {
    // PyTorch's bicubic: 4 x 4 taps around the unpadded coordinate, each tap's
    // integer position padded on its own (border: clipped; reflection:
    // reflected, then clipped; zeros: read as 0 outside), Keys' cubic with
    // A = -0.75 along x, then along y.
    Tensor ux = unnormalize(grid.select(3, 0), w, align), uy = unnormalize(grid.select(3, 1), h, align);
    Tensor x0 = floor(ux).detach(), y0 = floor(uy).detach();
    auto weights = [](const Tensor& t) {
      const double a = -0.75;
      auto near = [a](const Tensor& x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
      auto far = [a](const Tensor& x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
      return std::array<Tensor, 4>{far(t + 1), near(t), near(1 - t), far(2 - t)};
    };
    auto pad_tap = [&](const Tensor& p, int64_t size) {
      if (padding_mode == "zeros") return p;
      return source_coord_from_pixel(p, size, padding_mode, align);
    };
    const std::array<Tensor, 4> cx = weights(ux - x0), cy = weights(uy - y0);
    Tensor out;
    for (int j = 0; j < 4; ++j) {
      Tensor py = pad_tap(y0 + (j - 1), h), row;
      for (int i = 0; i < 4; ++i) {
        Tensor term = sample(pad_tap(x0 + (i - 1), w), py) * cx[static_cast<size_t>(i)].unsqueeze(1);
        row = row.defined() ? row + term : term;
      }
      Tensor term = row * cy[static_cast<size_t>(j)].unsqueeze(1);
      out = out.defined() ? out + term : term;
    }
    return out;
  }
  Tensor x0 = floor(ix).detach(), y0 = floor(iy).detach();
  Tensor x1 = x0 + 1, y1 = y0 + 1;
  Tensor wx1 = ix - x0, wx0 = x1 - ix, wy1 = iy - y0, wy0 = y1 - iy;
  return sample(x0, y0) * (wx0 * wy0).unsqueeze(1) + sample(x1, y0) * (wx1 * wy0).unsqueeze(1) +
         sample(x0, y1) * (wx0 * wy1).unsqueeze(1) + sample(x1, y1) * (wx1 * wy1).unsqueeze(1);
}

}  // namespace ember

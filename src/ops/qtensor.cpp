// Quantized tensors: quantize / dequantize with PyTorch's arithmetic, qparams.
//
// Note [quantized dtypes]
// torch.qint8 / torch.quint8 are dtypes in PyTorch, but almost every op on a
// quantized tensor raises there ("not implemented for QuantizedCPU"). Ember
// keeps them out of ScalarType, whose rows feed every dispatch table, and
// gives them a handle of their own: a QTensor holds the integer values as an
// ordinary kInt8 / kUInt8 tensor (int_repr) plus the affine parameters. The
// arithmetic is PyTorch's (fbgemm's): quantize multiplies by the float32
// reciprocal of the scale and rounds half to even (std::nearbyint), then adds
// the zero point and clamps; per-tensor dequantize is float32
// (q - zero_point) * scale, per-channel dequantize goes through double.
#include "ember/quant/qtensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/ops/factory.h"

namespace ember {

std::string_view to_string(QDtype t) { return t == kQInt8 ? "qint8" : "quint8"; }
ScalarType underlying(QDtype t) { return t == kQInt8 ? kInt8 : kUInt8; }
int64_t qmin(QDtype t) { return t == kQInt8 ? -128 : 0; }
int64_t qmax(QDtype t) { return t == kQInt8 ? 127 : 255; }
std::string_view to_string(QScheme s) {
  return s == QScheme::PerTensorAffine ? "per_tensor_affine" : "per_channel_affine";
}

namespace {

void check_scale(double scale, const char* op) {
  EMBER_CHECK(std::isfinite(scale) && scale > 0 && std::isfinite(1.0f / static_cast<float>(scale)),
              "{}: scale must be a positive finite number whose float32 reciprocal is finite, got {}", op, scale);
}

void check_zero_point(int64_t zp, QDtype dtype, const char* op) {
  EMBER_CHECK(zp >= qmin(dtype) && zp <= qmax(dtype), "{}: zero_point {} is outside the range of {} [{}, {}]", op,
              zp, to_string(dtype), qmin(dtype), qmax(dtype));
}

// PyTorch's quantize_val: float32 reciprocal and product, nearbyint (ties to
// even in the default rounding mode), zero point, clamp.
template <typename Q>
inline Q quantize_val(float inv_scale, int64_t zp, float x, int64_t lo, int64_t hi) {
  const float r = std::nearbyint(x * inv_scale);
  // NaN and values past int64 saturate like the clamp (PyTorch's cast is UB there).
  int64_t q = std::isnan(r) ? zp : r >= 9.2e18f ? hi : r <= -9.2e18f ? lo : static_cast<int64_t>(r) + zp;
  return static_cast<Q>(std::clamp(q, lo, hi));
}

template <typename Q>
void quantize_rows(const float* x, Q* q, int64_t outer, int64_t channels, int64_t inner, const double* scales,
                   const int64_t* zps, int64_t lo, int64_t hi) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float inv = 1.0f / static_cast<float>(scales[c]);
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) q[base + i] = quantize_val<Q>(inv, zps[c], x[base + i], lo, hi);
    }
}

// x as contiguous float32 [outer, channels, inner] around axis.
void quantize_into(const Tensor& x, const Tensor& q, int64_t axis, const std::vector<double>& scales,
                   const std::vector<int64_t>& zps, QDtype dtype) {
  Tensor xf = x.to(kFloat32).contiguous();
  int64_t outer = 1, inner = 1, channels = 1;
  if (axis >= 0) {
    for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
    channels = x.size(axis);
    for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.size(d);
  } else {
    inner = x.numel();
  }
  const float* src = xf.data_ptr<float>();
  if (dtype == kQInt8)
    quantize_rows(src, q.data_ptr<int8_t>(), outer, channels, inner, scales.data(), zps.data(), qmin(dtype), qmax(dtype));
  else
    quantize_rows(src, q.data_ptr<uint8_t>(), outer, channels, inner, scales.data(), zps.data(), qmin(dtype), qmax(dtype));
}

// Python's repr of a float: shortest round trip, fixed for 1e-4 <= |v| < 1e16.
std::string py_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::fabs(v);
  if (v != 0 && (a < 1e-4 || a >= 1e16)) {
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string s(buf, res.ptr);  // "1e-05" already has Python's two-digit exponent
    return s;
  }
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

// PyTorch's _add_suffixes: each suffix after ", " unless the line would pass
// 80 columns, then on a new line indented under "tensor(". A suffix is
// measured as PyTorch writes it, with its "torch." prefixes (`hidden` of
// them), so the lines break where PyTorch's do.
struct Suffix {
  std::string text;
  size_t hidden = 0;
};
std::string add_suffixes(std::string s, const std::vector<Suffix>& suffixes) {
  constexpr size_t kIndent = 7, kLineWidth = 80, kPrefix = 6;  // "torch."
  const size_t nl = s.rfind('\n');
  size_t last = nl == std::string::npos ? s.size() + 2 : s.size() - nl + 1;
  for (const Suffix& suf : suffixes) {
    const size_t len = suf.text.size() + kPrefix * suf.hidden;
    if (last + len + 2 > kLineWidth) {
      s += ",\n" + std::string(kIndent, ' ') + suf.text;
      last = kIndent + len;
    } else {
      s += ", " + suf.text;
      last += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

QTensor QTensor::per_tensor(Tensor int_repr, QDtype dtype, double scale, int64_t zero_point) {
  EMBER_CHECK(int_repr.defined() && int_repr.dtype() == underlying(dtype),
              "QTensor: {} values must be a {} tensor, got {}", to_string(dtype), to_string(underlying(dtype)),
              int_repr.defined() ? std::string(to_string(int_repr.dtype())) : "an undefined tensor");
  check_scale(scale, "QTensor");
  check_zero_point(zero_point, dtype, "QTensor");
  QTensor q;
  q.values_ = int_repr.contiguous();
  q.dtype_ = dtype;
  q.scheme_ = QScheme::PerTensorAffine;
  q.scale_ = scale;
  q.zero_point_ = zero_point;
  return q;
}

QTensor QTensor::per_channel(Tensor int_repr, QDtype dtype, Tensor scales, Tensor zero_points, int64_t axis) {
  EMBER_CHECK(int_repr.defined() && int_repr.dtype() == underlying(dtype),
              "QTensor: {} values must be a {} tensor, got {}", to_string(dtype), to_string(underlying(dtype)),
              int_repr.defined() ? std::string(to_string(int_repr.dtype())) : "an undefined tensor");
  EMBER_CHECK(axis >= 0 && axis < int_repr.dim(), "QTensor: axis {} out of range for a {}-D tensor", axis,
              int_repr.dim());
  const int64_t c = int_repr.size(axis);
  EMBER_CHECK(scales.defined() && zero_points.defined() && scales.dim() == 1 && zero_points.dim() == 1 &&
                  scales.size(0) == c && zero_points.size(0) == c,
              "QTensor: per-channel scales and zero_points must be 1-D of size {} (dim {} of [{}])", c, axis,
              fmt::join(int_repr.sizes(), ", "));
  QTensor q;
  q.values_ = int_repr.contiguous();
  q.dtype_ = dtype;
  q.scheme_ = QScheme::PerChannelAffine;
  q.scales_ = scales.to(kFloat64).contiguous();
  q.zero_points_ = zero_points.to(kInt64).contiguous();
  for (double s : q.scales_.to_vector<double>()) check_scale(s, "QTensor");
  for (int64_t z : q.zero_points_.to_vector<int64_t>()) check_zero_point(z, dtype, "QTensor");
  q.axis_ = axis;
  return q;
}

double QTensor::q_scale() const {
  EMBER_CHECK(scheme_ == QScheme::PerTensorAffine,
              "q_scale: expected a per_tensor_affine tensor, got per_channel_affine; use q_per_channel_scales()");
  return scale_;
}
int64_t QTensor::q_zero_point() const {
  EMBER_CHECK(scheme_ == QScheme::PerTensorAffine,
              "q_zero_point: expected a per_tensor_affine tensor, got per_channel_affine; use "
              "q_per_channel_zero_points()");
  return zero_point_;
}
const Tensor& QTensor::q_per_channel_scales() const {
  EMBER_CHECK(scheme_ == QScheme::PerChannelAffine,
              "q_per_channel_scales: expected a per_channel_affine tensor, got per_tensor_affine; use q_scale()");
  return scales_;
}
const Tensor& QTensor::q_per_channel_zero_points() const {
  EMBER_CHECK(scheme_ == QScheme::PerChannelAffine,
              "q_per_channel_zero_points: expected a per_channel_affine tensor, got per_tensor_affine");
  return zero_points_;
}
int64_t QTensor::q_per_channel_axis() const {
  EMBER_CHECK(scheme_ == QScheme::PerChannelAffine,
              "q_per_channel_axis: expected a per_channel_affine tensor, got per_tensor_affine");
  return axis_;
}

Tensor QTensor::dequantize() const {
  EMBER_CHECK(defined(), "dequantize: undefined quantized tensor");
  Tensor out = empty(values_.sizes(), kFloat32);
  float* dst = out.data_ptr<float>();
  const int64_t n = values_.numel();
  auto read = [&](int64_t i) -> int64_t {
    return dtype_ == kQInt8 ? values_.data_ptr<int8_t>()[i] : values_.data_ptr<uint8_t>()[i];
  };
  if (scheme_ == QScheme::PerTensorAffine) {
    const float s = static_cast<float>(scale_);
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(read(i) - zero_point_) * s;
    return out;
  }
  int64_t inner = 1;
  for (int64_t d = axis_ + 1; d < values_.dim(); ++d) inner *= values_.size(d);
  const int64_t c = values_.size(axis_);
  const double* s = scales_.data_ptr<double>();
  const int64_t* z = zero_points_.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ch = inner == 0 || c == 0 ? 0 : (i / inner) % c;
    dst[i] = static_cast<float>(static_cast<double>(read(i) - z[ch]) * s[ch]);
  }
  return out;
}

std::string QTensor::str() const {
  if (!defined()) return "tensor(undefined, quantized)";
  std::string s = dequantize().str();
  s.pop_back();  // the float tensor's ")": the suffixes follow
  std::vector<Suffix> suffixes;
  std::vector<std::string> dims;
  for (int64_t d : sizes()) dims.push_back(std::to_string(d));
  suffixes.push_back({fmt::format("size=({}{})", fmt::join(dims, ", "), dims.size() == 1 ? "," : "")});
  suffixes.push_back({fmt::format("dtype={}", to_string(dtype_)), 1});
  suffixes.push_back({fmt::format("quantization_scheme={}", to_string(scheme_)), 1});
  if (scheme_ == QScheme::PerTensorAffine) {
    suffixes.push_back({"scale=" + py_repr(scale_)});
    suffixes.push_back({fmt::format("zero_point={}", zero_point_)});
  } else {
    suffixes.push_back({"scale=" + scales_.str(), 1});  // dtype=torch.float64
    suffixes.push_back({"zero_point=" + zero_points_.str()});
    suffixes.push_back({fmt::format("axis={}", axis_)});
  }
  return add_suffixes(std::move(s), suffixes);
}

std::ostream& operator<<(std::ostream& os, const QTensor& q) { return os << q.str(); }

QTensor quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, QDtype dtype) {
  EMBER_CHECK(x.defined() && x.is_floating_point(), "quantize_per_tensor: expected a floating-point tensor, got {}",
              x.defined() ? std::string(to_string(x.dtype())) : "an undefined tensor");
  check_scale(scale, "quantize_per_tensor");
  check_zero_point(zero_point, dtype, "quantize_per_tensor");
  Tensor q = empty(x.sizes(), underlying(dtype));
  quantize_into(x, q, -1, {scale}, {zero_point}, dtype);
  return QTensor::per_tensor(q, dtype, scale, zero_point);
}

QTensor quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                             QDtype dtype) {
  EMBER_CHECK(x.defined() && x.is_floating_point(), "quantize_per_channel: expected a floating-point tensor, got {}",
              x.defined() ? std::string(to_string(x.dtype())) : "an undefined tensor");
  EMBER_CHECK(axis >= 0 && axis < x.dim(), "quantize_per_channel: axis {} out of range for a {}-D tensor", axis,
              x.dim());
  EMBER_CHECK(scales.defined() && scales.dim() == 1 && scales.size(0) == x.size(axis) && zero_points.defined() &&
                  zero_points.dim() == 1 && zero_points.size(0) == x.size(axis),
              "quantize_per_channel: scales and zero_points must be 1-D of size {} (dim {} of [{}])", x.size(axis),
              axis, fmt::join(x.sizes(), ", "));
  std::vector<double> s = scales.to_vector<double>();
  std::vector<int64_t> z = zero_points.to_vector<int64_t>();
  for (size_t i = 0; i < s.size(); ++i) {
    check_scale(s[i], "quantize_per_channel");
    check_zero_point(z[i], dtype, "quantize_per_channel");
  }
  Tensor q = empty(x.sizes(), underlying(dtype));
  quantize_into(x, q, axis, s, z, dtype);
  return QTensor::per_channel(q, dtype, tensor(s, {static_cast<int64_t>(s.size())}, kFloat64),
                              tensor(z, {static_cast<int64_t>(z.size())}, kInt64), axis);
}

namespace quant {

QTensor quantize_weight_per_channel(const Tensor& w) {
  EMBER_CHECK(w.defined() && w.dim() >= 1 && w.is_floating_point(),
              "quantize_weight_per_channel: expected a floating-point weight with a channel dim, got {}",
              w.defined() ? fmt::format("{}[{}]", to_string(w.dtype()), fmt::join(w.sizes(), ", ")) : "undefined");
  Tensor wf = w.to(kFloat32).contiguous();
  const int64_t c = w.size(0), per = c == 0 ? 0 : w.numel() / c;
  const float* p = wf.data_ptr<float>();
  std::vector<double> scales(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    float amax = 0;  // max(-min(w, 0), max(w, 0))
    for (int64_t j = 0; j < per; ++j) amax = std::max(amax, std::fabs(p[i * per + j]));
    // float32 arithmetic, as the observer's tensors.
    const float s = amax / 127.5f;
    scales[static_cast<size_t>(i)] = std::max(s, std::numeric_limits<float>::epsilon());
  }
  return quantize_per_channel(w, tensor(scales, {c}, kFloat64), zeros({c}, kInt64), 0, kQInt8);
}

}  // namespace quant
}  // namespace ember

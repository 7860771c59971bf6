// Quantized tensors (torch.quantize_per_tensor / quantize_per_channel): int8
// or uint8 values with an affine map to float, x = (q - zero_point) * scale.
// See Note [quantized dtypes] in src/ops/qtensor.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

// The quantized dtypes (torch.qint8, torch.quint8). They are not ScalarTypes:
// no elementwise op takes them, so they live beside the integer storage a
// QTensor holds (kInt8 / kUInt8).
enum class QDtype : int8_t { QInt8, QUInt8 };
constexpr QDtype kQInt8 = QDtype::QInt8;
constexpr QDtype kQUInt8 = QDtype::QUInt8;
std::string_view to_string(QDtype t);
// The storage dtype: kInt8 for kQInt8, kUInt8 for kQUInt8.
ScalarType underlying(QDtype t);
int64_t qmin(QDtype t);
int64_t qmax(QDtype t);

enum class QScheme : int8_t { PerTensorAffine, PerChannelAffine };
std::string_view to_string(QScheme s);

class QTensor {
 public:
  QTensor() = default;
  // From integer values and parameters (checked: dtype, ranges, shapes).
  static QTensor per_tensor(Tensor int_repr, QDtype dtype, double scale, int64_t zero_point);
  // scales float64 [C], zero_points int64 [C], C = int_repr.size(axis).
  static QTensor per_channel(Tensor int_repr, QDtype dtype, Tensor scales, Tensor zero_points, int64_t axis);

  bool defined() const { return values_.defined(); }
  QDtype dtype() const { return dtype_; }
  QScheme qscheme() const { return scheme_; }
  IntArrayRef sizes() const { return values_.sizes(); }
  int64_t dim() const { return values_.dim(); }
  int64_t numel() const { return values_.numel(); }
  // The stored integers (int8 or uint8), contiguous; shares storage.
  const Tensor& int_repr() const { return values_; }
  // Per-tensor parameters; an error for a per-channel tensor (as PyTorch).
  double q_scale() const;
  int64_t q_zero_point() const;
  // Per-channel parameters (float64 [C], int64 [C]) and the channel axis.
  const Tensor& q_per_channel_scales() const;
  const Tensor& q_per_channel_zero_points() const;
  int64_t q_per_channel_axis() const;
  // float32 values (q - zero_point) * scale.
  Tensor dequantize() const;
  // PyTorch's repr without the "torch." prefixes (as Ember prints dtypes).
  std::string str() const;

 private:
  Tensor values_;
  QDtype dtype_ = kQInt8;
  QScheme scheme_ = QScheme::PerTensorAffine;
  double scale_ = 1.0;
  int64_t zero_point_ = 0;
  Tensor scales_, zero_points_;
  int64_t axis_ = 0;
};

std::ostream& operator<<(std::ostream& os, const QTensor& q);

// q = clamp(zero_point + round_half_even(x * (1 / scale)), qmin, qmax), with
// 1 / scale and the product in float32 (PyTorch's quantize_val / fbgemm).
QTensor quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, QDtype dtype);
// Per slice along axis; scales [C] (any float dtype), zero_points [C] (integers).
QTensor quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                             QDtype dtype);
inline Tensor dequantize(const QTensor& q) { return q.dequantize(); }

namespace quant {

struct QParams {
  double scale = 1.0;
  int64_t zero_point = 0;
};

// PyTorch's ChooseQuantizationParams (fbgemm): the range is widened to hold
// 0, scale = (max - min) / (qmax - qmin) (0.1 when that is 0), and the zero
// point is the nudged, rounded qmin - min / scale.
QParams choose_qparams(float min, float max, int64_t qmin, int64_t qmax);

// PyTorch's per-channel symmetric int8 weight observer
// (default_per_channel_weight_observer): per row of a 2-D (or more) weight
// along axis 0, scale = max(|w|) / 127.5 (at least float32 epsilon),
// zero_point 0, values in [-128, 127].
QTensor quantize_weight_per_channel(const Tensor& w);

}  // namespace quant
}  // namespace ember

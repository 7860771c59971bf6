// Dynamic int8 linear (torch.ao.nn.quantized.dynamic.Linear's arithmetic):
// weights int8 per output channel (symmetric), activations quantized to
// uint8 per call from their observed range, results in float32.
#pragma once

#include <memory>

#include "ember/quant/qtensor.h"

namespace ember {
class PackedQGemmPool;
}

namespace ember::quant {

// A Linear's weight prepared once: int8 values [out, in], float32 scales
// [out] and the int32 row sums the activation zero point needs.
struct PackedLinear {
  Tensor weight;   // int8 [out, in]
  Tensor scale;    // float32 [out]
  Tensor col_sum;  // int32 [out]: sum over in of weight
  Tensor bias;     // float32 [out], or undefined
  // Activations in [0, 127] instead of [0, 255]: see cpu_has_vnni (kernels/qgemm.h).
  bool reduce_range = false;
  // The int8 products made for this weight, kept between calls (the fused
  // LSTM's, kernels/qgemm.h); shared by copies. from_parts makes it.
  std::shared_ptr<PackedQGemmPool> products;

  // Quantizes a float weight [out, in] with quantize_weight_per_channel.
  static PackedLinear pack(const Tensor& weight, const Tensor& bias);
  // From already quantized parts (a graph's constants); checks their shapes and dtypes.
  static PackedLinear from_parts(Tensor weight, Tensor scale, Tensor col_sum, Tensor bias, bool reduce_range);
  int64_t in_features() const { return weight.size(1); }
  int64_t out_features() const { return weight.size(0); }
  // The weight as a quantized tensor (per-channel qint8, axis 0).
  QTensor qweight() const;
};

// y = x W^T + b through int8 (Note [dynamic int8 linear], kernels/qgemm.h);
// x [..., in] float32. reference = true runs the int8 product through the
// plain loop (the test oracle).
Tensor linear_dynamic(const Tensor& x, const PackedLinear& w, bool reference = false);

// Whether this CPU's int8 kernels want reduce_range (no VNNI).
bool default_reduce_range();

}  // namespace ember::quant

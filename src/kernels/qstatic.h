// Static int8 kernels (Note [static int8] in src/jit/passes/quantize_static.cpp):
// activations quantized per tensor with scales fixed by calibration, weights
// int8 per output channel (symmetric), int32 accumulation, a float epilogue
// (bias, ReLU) and the result written as float32 or requantized to uint8 for
// the next int8 layer. Every kernel has a reference loop, the oracle of the
// oneDNN one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "ember/core/scalar_type.h"
#include "kernels/nn.h"
#include "kernels/prepared.h"

namespace ember {

// A per-tensor quantized activation: q = clamp(round(x / scale)), zero
// point 0. kUInt8 for values that are never negative (after a ReLU): [0, 255];
// kInt8 (symmetric) otherwise: [-127, 127].
struct QActivation {
  ScalarType dtype = ScalarType::UInt8;
  float scale = 1.f;
};

// What runs after the int32 product: y = act(acc * src.scale * w_scale[c] +
// bias[c]); then y as float32, or quantized to uint8 with dst_scale.
struct QEpilogue {
  bool relu = false;
  ScalarType dst_dtype = ScalarType::Float32;  // or kUInt8
  float dst_scale = 1.f;                       // kUInt8 only
};

struct QConvSpec {
  ConvParams p;  // geometry (p.dtype is ignored)
  QActivation src;
  QEpilogue out;
  std::optional<FusedPool> pool;  // max pooling after the epilogue (on uint8 or float)
};

struct QLinearSpec {
  int64_t m = 0, n = 0, k = 0;  // [m, k] x [n, k]^T -> [m, n]
  QActivation src;
  QEpilogue out;
};

// q[i] = clamp(round_half_even(x[i] / a.scale)) in a.dtype's range, NaN to 0.
void quantize_activation(const float* x, void* q, int64_t n, const QActivation& a);

// The reference loops (the test oracle; also the fallback where oneDNN has no
// JIT kernel). w: int8 [c_out, c_in/groups, kh, kw] / [n, k]; w_scale and
// bias [c_out] / [n] (bias may be null). NCHW / row-major in and out.
void qconv2d_ref(const QConvSpec& s, const void* src, const int8_t* w, const float* w_scale, const float* bias,
                 void* dst);
void qlinear_ref(const QLinearSpec& s, const void* src, const int8_t* w, const float* w_scale, const float* bias,
                 void* dst);

// oneDNN int8 primitives (VNNI / AMX / AVX2, whatever the CPU has) made once
// for a geometry, weights reordered once; nullptr where oneDNN offers only a
// reference implementation. Not thread-safe: one per prepared graph node.
class PreparedQConv {
 public:
  ~PreparedQConv();
  static std::unique_ptr<PreparedQConv> make(const QConvSpec& s, const int8_t* w, const float* w_scale,
                                             const float* bias);
  void run(const void* src, void* dst);
  std::string impl() const;

 private:
  struct Impl;
  explicit PreparedQConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class PreparedQLinear {
 public:
  ~PreparedQLinear();
  static std::unique_ptr<PreparedQLinear> make(const QLinearSpec& s, const int8_t* w, const float* w_scale,
                                               const float* bias);
  void run(const void* src, void* dst);
  std::string impl() const;

 private:
  struct Impl;
  explicit PreparedQLinear(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember

// Kernel signatures of the nn ops (convolution and pooling): contiguous
// NCHW tensors in and out, geometry in one plain struct per family.
#pragma once

#include <cstdint>

#include "core/op_registry.h"
#include "ember/core/scalar_type.h"

namespace ember {

// Note [conv geometry]: a grouped 2-D convolution
//   out[n, co, oh, ow] = bias[co] + sum_{ci in group(co), kh, kw}
//       in[n, ci, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw] * w[co, ci % cin_g, kh, kw]
// with input [n, c_in, ih, iw], weight [c_out, c_in / groups, kh, kw], output
// [n, c_out, oh, ow]. Padding may differ per side (pt/pb, pl/pr): "same"
// with an even kernel pads one more at the end, and conv_transpose's
// output_padding shows up as pb = pt - output_padding. conv1d is the ih = 1,
// kh = 1 case. The caller fills oh/ow consistently:
//   oh = (ih + pt + pb - dh * (kh - 1) - 1) / sh + 1.
struct ConvParams {
  ScalarType dtype = ScalarType::Float32;
  // Native bf16 autocast: float32 tensors in and out, products in bfloat16
  // (operands rounded to bf16, float32 accumulation) by oneDNN's bf16
  // kernels; float32 where oneDNN has none for the geometry or the CPU.
  bool bf16 = false;
  int64_t n = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t ih = 0, iw = 0, oh = 0, ow = 0, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;
};

// out = conv(in, w) + bias (bias may be null).
using Conv2dKernel = void(const ConvParams& p, const void* in, const void* w, const void* bias, void* out);
// grad_in = d(sum(conv(in, w) * grad_out)) / d(in); overwrites grad_in.
using Conv2dBackwardInputKernel = void(const ConvParams& p, const void* grad_out, const void* w, void* grad_in);
// grad_w (and grad_bias unless null) from the input and grad_out; overwrites.
using Conv2dBackwardWeightKernel = void(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                        void* grad_bias);

// Few input channels (c_in * kh * kw <= 12), float32, groups 1, stride 1,
// dilation 1: the Highway kernels of conv_small_cin.cpp (Note [small-c_in
// convolution]), used instead of oneDNN where they apply.
bool conv2d_small_cin_applies(const ConvParams& p);
void conv2d_small_cin(const ConvParams& p, const void* in, const void* w, const void* bias, void* out);
void conv2d_small_cin_weight_grad(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                  void* grad_bias);

// The plain reference loops (float32, float64, and the 16-bit floats): the
// production path for float64 and the oracle the oneDNN path is tested against.
void conv2d_ref(const ConvParams& p, const void* in, const void* w, const void* bias, void* out);
void conv2d_backward_input_ref(const ConvParams& p, const void* grad_out, const void* w, void* grad_in);
void conv2d_backward_weight_ref(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                void* grad_bias);

// Note [pool geometry]: windows over input [n, c, ih, iw] (n * c planes):
// output (oh, ow) reads rows oh*sh - pt + i*dh for i < kh (likewise columns);
// positions outside [0, ih) x [0, iw) are padding. pb/pr are the end
// paddings ceil_mode needs so the last window fits; for avg pooling with
// count_include_pad the divisor counts padding up to pt/pl and the symmetric
// end padding only (PyTorch's rule), never the extra ceil_mode columns.
struct PoolParams {
  ScalarType dtype = ScalarType::Float32;
  int64_t n = 0, c = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;  // symmetric padding as the user gave it
  bool count_include_pad = true;
};

// out = max over each window; indices (int64, may be null) = argmax as a flat
// index into the window's H*W plane, the first maximum on ties; NaN wins.
using MaxPool2dKernel = void(const PoolParams& p, const void* in, void* out, int64_t* indices);
// grad_in (zeroed here) [plane, indices[o]] += grad_out[o].
using MaxPool2dBackwardKernel = void(const PoolParams& p, const void* grad_out, const int64_t* indices,
                                     void* grad_in);
using AvgPool2dKernel = void(const PoolParams& p, const void* in, void* out);
using AvgPool2dBackwardKernel = void(const PoolParams& p, const void* grad_out, void* grad_in);
// Adaptive average pooling: window i covers [floor(i*in/out), ceil((i+1)*in/out)).
// Uses n, c, ih, iw, oh, ow and dtype only.
using AdaptiveAvgPool2dKernel = void(const PoolParams& p, const void* in, void* out);
using AdaptiveAvgPool2dBackwardKernel = void(const PoolParams& p, const void* grad_out, void* grad_in);

void max_pool2d_ref(const PoolParams& p, const void* in, void* out, int64_t* indices);
void max_pool2d_backward_ref(const PoolParams& p, const void* grad_out, const int64_t* indices, void* grad_in);
// Whether the CPU max pool kernels take pool_vec.cpp's vectorized path
// (Note [non-overlapping max pool]): float32, kh == sh <= 4, 2 <= kw == sw <= 4,
// no padding, dilation 1, floor-mode output.
bool max_pool2d_vec_applies(const PoolParams& p);
void avg_pool2d_ref(const PoolParams& p, const void* in, void* out);
void avg_pool2d_backward_ref(const PoolParams& p, const void* grad_out, void* grad_in);

// Batch normalisation over contiguous (N, C, inner) data, per channel c.
// Statistics are accumulated in double whatever the data type.
struct BatchNormParams {
  int64_t n = 0, c = 0, inner = 0;
  ScalarType dtype = ScalarType::Float32;
};
// mean[c] and the biased variance var[c].
using BatchNormStatsKernel = void(const BatchNormParams& p, const void* x, double* mean, double* var);
// y = x * scale[c] + shift[c].
using BatchNormApplyKernel = void(const BatchNormParams& p, const void* x, const double* scale, const double* shift,
                                  void* y);
// Training-mode backward. sum_dy[c] = sum(dy), sum_dy_xhat[c] = sum(dy * xhat)
// with xhat = (x - mean) * invstd; when dx is non-null also
// dx = weight * invstd * (dy - sum_dy / M - xhat * sum_dy_xhat / M), M = n * inner
// (weight null: 1).
using BatchNormBackwardKernel = void(const BatchNormParams& p, const void* x, const void* dy, const double* mean,
                                     const double* invstd, const double* weight, void* dx, double* sum_dy,
                                     double* sum_dy_xhat);

// Layer normalisation over `rows` contiguous float32 rows of d values
// (PyTorch's definitions: biased variance, rstd = 1 / sqrt(var + eps)).
struct LayerNormParams {
  int64_t rows = 0, d = 0;
  float eps = 1e-5f;
};
// y = (x - mean) * rstd * w + b per row (w, b may be null); keeps each row's
// statistics for the backward: shifted_mean = mean - x[row][0], and rstd.
using LayerNormKernel = void(const LayerNormParams& p, const float* x, const float* w, const float* b, float* y,
                             float* shifted_mean, float* rstd);
// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = dy * w (w null:
// dy), xhat = (x - mean) * rstd; dw = sum over rows of dy * xhat, db = sum of
// dy. Each output may be null; dw and db do not depend on the thread count.
using LayerNormBackwardKernel = void(const LayerNormParams& p, const float* dy, const float* x,
                                     const float* shifted_mean, const float* rstd, const float* w, float* dx,
                                     float* dw, float* db);

}  // namespace ember

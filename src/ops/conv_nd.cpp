// conv3d, conv_transpose1d and the "same"/"valid" paddings of conv1d/conv3d,
// built on the 1-D/2-D convolutions. Note [conv3d as conv2d]: output depth
// slice o is sum_kd conv2d(input depth o * stride + kd * dilation, weight[:,
// :, kd]); stacking the output depths into the batch makes that one conv2d
// per kernel depth, and autograd differentiates the composite.
#include <algorithm>

#include "ops/op_util.h"
#include "ember/ops/indexing.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/view.h"

namespace ember {
namespace {

std::vector<int64_t> expand(const char* op, const char* name, IntArrayRef v, int64_t nd) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd,
              "{}: expected {} to be a single integer value or a list of {} values to match the convolution "
              "dimensions, but got {}={}",
              op, name, nd, name, shape_str(v));
  std::vector<int64_t> out(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) out[i] = v[v.size() == 1 ? 0 : static_cast<size_t>(i)];
  return out;
}

// "same": total padding dilation * (k - 1) per dim, the odd one at the end
// (PyTorch's rule); "valid": none. Returned as F.pad's list (last dim first).
std::vector<int64_t> string_padding(const char* op, const Tensor& weight, std::string_view mode,
                                    const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  int64_t nd = static_cast<int64_t>(stride.size());
  std::vector<int64_t> pads(static_cast<size_t>(2 * nd), 0);
  if (mode == "valid") return pads;
  EMBER_CHECK(mode == "same", "{}: invalid padding string: '{}' (expected 'same' or 'valid')", op, mode);
  EMBER_CHECK(std::all_of(stride.begin(), stride.end(), [](int64_t s) { return s == 1; }),
              "{}: padding='same' is not supported for strided convolutions, got stride={}; use an explicit padding",
              op, shape_str(stride));
  for (int64_t i = 0; i < nd; ++i) {
    int64_t total = dilation[i] * (weight.size(2 + i) - 1);
    int64_t j = nd - 1 - i;
    pads[2 * j] = total / 2;
    pads[2 * j + 1] = total - total / 2;
  }
  return pads;
}

Tensor conv3d_impl(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& pads,
                   const std::vector<int64_t>& dilation, int64_t groups) {
  const char* op = "conv3d";
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5, "{}: expected 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got {}",
              op, shape_str(input.sizes()));
  EMBER_CHECK(weight.dim() == 5, "{}: expected 5-D weight [C_out, C_in / groups, kD, kH, kW], got {}", op,
              shape_str(weight.sizes()));
  EMBER_CHECK(groups > 0, "{}: non-positive groups is not supported, got {}", op, groups);
  Tensor x = input.dim() == 4 ? input.unsqueeze(0) : input;
  EMBER_CHECK(x.size(1) == weight.size(1) * groups,
              "{}: Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels "
              "instead",
              op, groups, shape_str(weight.sizes()), shape_str(input.sizes()), weight.size(1) * groups, x.size(1));
  EMBER_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == weight.size(0)),
              "{}: expected bias of shape [{}], got {}", op, weight.size(0), shape_str(bias->sizes()));
  x = pad(x, pads);
  int64_t n = x.size(0), c = x.size(1), dp = x.size(2), h = x.size(3), w = x.size(4), kd = weight.size(2);
  int64_t span = dilation[0] * (kd - 1) + 1;
  EMBER_CHECK(dp >= span && h >= dilation[1] * (weight.size(3) - 1) + 1 && w >= dilation[2] * (weight.size(4) - 1) + 1,
              "{}: Calculated padded input size per channel is smaller than the kernel size; input {}, kernel {}", op,
              shape_str(input.sizes()), shape_str(weight.sizes()));
  int64_t dout = (dp - span) / stride[0] + 1;
  Tensor out;
  for (int64_t j = 0; j < kd; ++j) {
    // Input depths j * dilation + o * stride for every output depth o, folded into the batch.
    Tensor xs = x.slice(2, j * dilation[0], j * dilation[0] + (dout - 1) * stride[0] + 1, stride[0]);
    xs = xs.transpose(1, 2).reshape({n * dout, c, h, w});
    Tensor y = conv2d(xs, weight.select(2, j), std::nullopt, {stride[1], stride[2]}, {0, 0},
                      {dilation[1], dilation[2]}, groups);
    out = out.defined() ? out + y : y;
  }
  out = out.view({n, dout, out.size(1), out.size(2), out.size(3)}).transpose(1, 2);
  if (bias) out = out + bias->view({1, -1, 1, 1, 1});
  out = out.contiguous();
  return input.dim() == 4 ? out.squeeze(0) : out;
}

}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv3d";
  std::vector<int64_t> p = expand(op, "padding", padding, 3);
  for (int64_t v : p) EMBER_CHECK(v >= 0, "{}: negative padding is not supported, got {}", op, shape_str(padding));
  return conv3d_impl(input, weight, bias, expand(op, "stride", stride, 3), {p[2], p[2], p[1], p[1], p[0], p[0]},
                     expand(op, "dilation", dilation, 3), groups);
}

Tensor conv3d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv3d";
  std::vector<int64_t> s = expand(op, "stride", stride, 3), d = expand(op, "dilation", dilation, 3);
  EMBER_CHECK(weight.dim() == 5, "{}: expected 5-D weight [C_out, C_in / groups, kD, kH, kW], got {}", op,
              shape_str(weight.sizes()));
  return conv3d_impl(input, weight, bias, s, string_padding(op, weight, padding, s, d), d, groups);
}

Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv1d";
  std::vector<int64_t> s = expand(op, "stride", stride, 1), d = expand(op, "dilation", dilation, 1);
  EMBER_CHECK(weight.dim() == 3, "{}: expected 3-D weight [C_out, C_in / groups, K], got {}", op,
              shape_str(weight.sizes()));
  std::vector<int64_t> pads = string_padding(op, weight, padding, s, d);
  // Symmetric padding stays inside the convolution; an odd total pads the input first.
  if (pads[0] == pads[1]) return conv1d(input, weight, bias, s, {pads[0]}, d, groups);
  return conv1d(pad(input, pads), weight, bias, s, {0}, d, groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  const char* op = "conv_transpose1d";
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "{}: expected 2-D (C, L) or 3-D (N, C, L) input, got {}", op,
              shape_str(input.sizes()));
  EMBER_CHECK(weight.dim() == 3, "{}: expected 3-D weight [C_in, C_out / groups, K], got {}", op,
              shape_str(weight.sizes()));
  std::vector<int64_t> s = expand(op, "stride", stride, 1), p = expand(op, "padding", padding, 1),
                       op_ = expand(op, "output_padding", output_padding, 1), d = expand(op, "dilation", dilation, 1);
  // A length-L signal is an image of height 1: the 2-D transposed convolution does the work.
  Tensor x = input.unsqueeze(-2);
  Tensor y = conv_transpose2d(x, weight.unsqueeze(2), bias, {1, s[0]}, {0, p[0]}, {0, op_[0]}, groups, {1, d[0]});
  return y.squeeze(-2);
}

}  // namespace ember

// Neural-network ops with PyTorch's torch.nn.functional names and shapes
// (N, C, spatial...). Convolution and pooling run on oneDNN; each op has its
// derivative beside its forward.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "ember/core/tensor.h"

namespace ember {

// input [N, C_in, L], weight [C_out, C_in / groups, K].
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW].
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1, 1}, IntArrayRef padding = {0, 0}, IntArrayRef dilation = {1, 1},
              int64_t groups = 1);
// padding = "same" or "valid" (stride must be 1 for "same").
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation = {1, 1},
                           int64_t groups = 1);
// A padding mode for conv2d (torch::kSame / torch::kValid). A distinct type,
// so a braced padding like {0, 0} is never mistaken for a mode.
struct PaddingMode {
  constexpr explicit PaddingMode(std::string_view m) : mode(m) {}
  std::string_view mode;
};
constexpr PaddingMode kSame{"same"};
constexpr PaddingMode kValid{"valid"};
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                     PaddingMode padding, IntArrayRef dilation = {1, 1}, int64_t groups = 1) {
  return conv2d_padding_mode(input, weight, bias, stride, padding.mode, dilation, groups);
}
// weight [C_in, C_out / groups, kH, kW].
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1, 1}, IntArrayRef padding = {0, 0},
                        IntArrayRef output_padding = {0, 0}, int64_t groups = 1, IntArrayRef dilation = {1, 1});

// stride defaults to kernel_size when empty.
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0}, IntArrayRef dilation = {1, 1}, bool ceil_mode = false);
// (values, int64 flat indices into each H*W plane), like return_indices=True.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                  IntArrayRef stride = {}, IntArrayRef padding = {0, 0},
                                                  IntArrayRef dilation = {1, 1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace ember

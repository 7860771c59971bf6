// Neural-network ops with PyTorch's torch.nn.functional names and shapes
// (N, C, spatial...). Convolution and pooling run on oneDNN; each op has its
// derivative beside its forward.
#pragma once

#include <concepts>
#include <optional>
#include <string>
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
// A template, so a braced padding such as {0} or {0, 0} (which could also
// build a string_view from a null pointer) never makes a call ambiguous: a
// braced list deduces no P and only the IntArrayRef overload remains.
template <std::same_as<PaddingMode> P>
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                     P padding, IntArrayRef dilation = {1, 1}, int64_t groups = 1) {
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

// ---- 1-D and 3-D convolutions and pools (src/ops/conv_nd.cpp, pool_nd.cpp):
// composites of the 2-D kernels and sliding windows, PyTorch's arguments. ----

// input [N, C_in, D, H, W] (or unbatched), weight [C_out, C_in / groups, kD, kH, kW].
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1, 1, 1}, IntArrayRef padding = {0, 0, 0}, IntArrayRef dilation = {1, 1, 1},
              int64_t groups = 1);
// padding = "same" or "valid" (stride must be 1 for "same").
Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation = {1},
                           int64_t groups = 1);
Tensor conv3d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation = {1, 1, 1},
                           int64_t groups = 1);
template <std::same_as<PaddingMode> P>  // see conv2d's
inline Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                     P padding, IntArrayRef dilation = {1}, int64_t groups = 1) {
  return conv1d_padding_mode(input, weight, bias, stride, padding.mode, dilation, groups);
}
template <std::same_as<PaddingMode> P>  // see conv2d's
inline Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                     P padding, IntArrayRef dilation = {1, 1, 1}, int64_t groups = 1) {
  return conv3d_padding_mode(input, weight, bias, stride, padding.mode, dilation, groups);
}
// input [N, C_in, L] (or unbatched), weight [C_in, C_out / groups, K].
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});

// stride defaults to kernel_size when empty.
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0, 0, 0}, IntArrayRef dilation = {1, 1, 1}, bool ceil_mode = false);
// Window i covers [floor(i * L / out), ceil((i + 1) * L / out)); the
// _with_indices forms also return int64 indices (flat h * W + w for 2-D), like
// return_indices=True. adaptive_avg_pool1d/3d: ember/ops/resample.h.
Tensor adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size);
std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, IntArrayRef output_size);


// ---- im2col, bags and bilinear forms (src/ops/fold.cpp, embedding_bag.cpp) ----

// F.unfold (im2col): (N, C, H, W) or (C, H, W) -> (N, C * kH * kW, L) with the
// patches' values in (c, kh, kw) order, L output positions row-major.
Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = {1}, IntArrayRef padding = {0},
              IntArrayRef stride = {1});
// F.fold (col2im), unfold's adjoint: (N, C * kH * kW, L) or unbatched ->
// (N, C, *output_size), overlapping patch values summed.
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = {1},
            IntArrayRef padding = {0}, IntArrayRef stride = {1});

// F.embedding_bag's keyword arguments (max_norm / scale_grad_by_freq /
// sparse are not supported).
struct EmbeddingBagOptions {
  Tensor offsets{};                   // 1-D input: start of each bag (int64)
  std::string mode = "mean";          // "sum", "mean" or "max"
  Tensor per_sample_weights{};        // like input, mode "sum" only
  bool include_last_offset = false;   // offsets has B + 1 entries, the last = input size
  std::optional<int64_t> padding_idx{};  // entries equal to it are left out of their bag
};
// input (B, N) — one bag per row — or 1-D with offsets -> [B, embedding_dim];
// an empty bag gives zeros.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagOptions& options = {});

// y = x1^T A x2 + b over the last dims: x1 [*, in1], x2 [*, in2], weight
// [out, in1, in2], bias [out] -> [*, out].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = std::nullopt);

}  // namespace ember

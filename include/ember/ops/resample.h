// Resampling with torch.nn.functional's names: interpolate (nearest,
// nearest-exact, linear, bilinear, bicubic, trilinear, area), the 1-D/3-D
// adaptive average pools, pixel_shuffle / pixel_unshuffle, affine_grid and
// grid_sample. Composites of index_select / gather and arithmetic, so the
// gradients (to the input and to the grid) come from those ops.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// F.interpolate's keyword arguments. size or scale_factor: one value for
// every spatial dim or one per spatial dim.
//   interpolate(x, {.size = {8, 8}, .mode = "bilinear", .align_corners = false})
//   interpolate(x, {.scale_factor = {2.0}})
struct InterpolateOptions {
  std::vector<int64_t> size{};
  std::vector<double> scale_factor{};
  std::string mode = "nearest";
  // Only for linear, bilinear, bicubic, trilinear (false when unset).
  std::optional<bool> align_corners{};
  // true: derive the output size from scale_factor and then sample with
  // in / out as the scale, instead of 1 / scale_factor.
  std::optional<bool> recompute_scale_factor{};
  // bilinear / bicubic on 4-D input only: when shrinking, every input pixel
  // under the stretched filter contributes (PyTorch's antialias=True, PIL's
  // resize), instead of the two or four nearest.
  bool antialias = false;
};

// input (N, C, *spatial) with 1-3 spatial dims.
Tensor interpolate(const Tensor& input, const InterpolateOptions& options);

// Output [N, C, *output_size] whatever the input size: output i averages
// [floor(i * in / out), ceil((i + 1) * in / out)). (N, C, L) or (C, L).
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
// (N, C, D, H, W) or (C, D, H, W).
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);

// (*, C * r^2, H, W) -> (*, C, H * r, W * r).
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
// (*, C, H * r, W * r) -> (*, C * r^2, H, W).
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

// theta [N, 2, 3] with size (N, C, H, W) -> grid [N, H, W, 2], or theta
// [N, 3, 4] with size (N, C, D, H, W) -> grid [N, D, H, W, 3]; grid values
// are (x, y[, z]) in [-1, 1].
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);
// input (N, C, H, W), grid (N, H_out, W_out, 2) of (x, y) in [-1, 1] ->
// (N, C, H_out, W_out). mode "bilinear", "nearest" or "bicubic"; padding_mode "zeros",
// "border" or "reflection". 5-D: input (N, C, D, H, W), grid (N, D_out, H_out,
// W_out, 3) of (x, y, z); "bilinear" is trilinear there, bicubic is 4-D only.
Tensor grid_sample(const Tensor& input, const Tensor& grid, const std::string& mode = "bilinear",
                   const std::string& padding_mode = "zeros", std::optional<bool> align_corners = std::nullopt);

}  // namespace ember

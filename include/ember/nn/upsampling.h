// Upsample, PixelShuffle, PixelUnshuffle (torch.nn names, arguments, repr).
#pragma once

#include "ember/nn/module.h"
#include "ember/ops/resample.h"

namespace ember::nn {

// F.interpolate as a layer:
//   Upsample({.scale_factor = {2.0}, .mode = "bilinear", .align_corners = false})
// repr prints one size / scale_factor value as a scalar, several as a tuple.
class Upsample : public Module {
 public:
  explicit Upsample(InterpolateOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const InterpolateOptions options;
};

// (*, C * r^2, H, W) -> (*, C, H * r, W * r).
class PixelShuffle : public Module {
 public:
  explicit PixelShuffle(int64_t upscale_factor);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t upscale_factor;
};

// (*, C, H * r, W * r) -> (*, C * r^2, H, W).
class PixelUnshuffle : public Module {
 public:
  explicit PixelUnshuffle(int64_t downscale_factor);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t downscale_factor;
};

}  // namespace ember::nn

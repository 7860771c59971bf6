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

 protected:
  Upsample(std::string type_name, InterpolateOptions options);
};

// PyTorch's older names: nearest, and bilinear with align_corners=True, on
// 4-D input. Give size or scale_factor:
//   UpsamplingBilinear2d({.scale_factor = {2.0}})
struct Upsampling2dOptions {
  std::vector<int64_t> size{};
  std::vector<double> scale_factor{};
};

class UpsamplingNearest2d : public Upsample {
 public:
  explicit UpsamplingNearest2d(Upsampling2dOptions o)
      : Upsample("UpsamplingNearest2d", {.size = o.size, .scale_factor = o.scale_factor, .mode = "nearest"}) {}
};

class UpsamplingBilinear2d : public Upsample {
 public:
  explicit UpsamplingBilinear2d(Upsampling2dOptions o)
      : Upsample("UpsamplingBilinear2d",
                 {.size = o.size, .scale_factor = o.scale_factor, .mode = "bilinear", .align_corners = true}) {}
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

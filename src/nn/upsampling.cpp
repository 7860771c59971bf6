// Upsample, PixelShuffle, PixelUnshuffle over the functional resampling ops.
#include "ember/nn/upsampling.h"

#include <fmt/ranges.h>

namespace ember::nn {

Upsample::Upsample(InterpolateOptions o) : Upsample("Upsample", std::move(o)) {}
Upsample::Upsample(std::string type_name, InterpolateOptions o) : Module(std::move(type_name)), options(std::move(o)) {}

Tensor Upsample::forward(const Tensor& input) { return interpolate(input, options); }

std::string Upsample::extra_repr() const {
  std::string info;
  if (!options.scale_factor.empty()) {
    // PyTorch stores float(scale_factor) (or a tuple of floats) and prints its repr.
    std::vector<std::string> v;
    for (double f : options.scale_factor) v.push_back(py_float(f));
    info = "scale_factor=" + (v.size() == 1 ? v[0] : fmt::format("({})", fmt::join(v, ", ")));
  } else {
    info = "size=" + (options.size.size() == 1 ? std::to_string(options.size[0]) : py_tuple(options.size));
  }
  return info + ", mode=" + options.mode;  // str.format: no quotes
}

PixelShuffle::PixelShuffle(int64_t r) : Module("PixelShuffle"), upscale_factor(r) {}
Tensor PixelShuffle::forward(const Tensor& input) { return pixel_shuffle(input, upscale_factor); }
std::string PixelShuffle::extra_repr() const { return fmt::format("upscale_factor={}", upscale_factor); }

PixelUnshuffle::PixelUnshuffle(int64_t r) : Module("PixelUnshuffle"), downscale_factor(r) {}
Tensor PixelUnshuffle::forward(const Tensor& input) { return pixel_unshuffle(input, downscale_factor); }
std::string PixelUnshuffle::extra_repr() const { return fmt::format("downscale_factor={}", downscale_factor); }

}  // namespace ember::nn

// ImagePreprocess: the deterministic preprocessing a run applies to an image
// before the model (decode, resize, ToTensor, Normalize), as data, so that an
// exported model can record it and `ember infer` can apply it to image files.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::data {

// What ImageFolder (decode to `channels`, resize_image) and the evaluation
// transform (ToTensor, Normalize) do to one image, in that order.
struct ImagePreprocess {
  int channels = 3;               // read_image's channels: 1 grey, 3 RGB, 4 RGBA
  int64_t height = 0, width = 0;  // resize_image to this size (0: keep the image's)
  std::vector<double> mean, std;  // Normalize per channel; empty: no Normalize

  // uint8 [H, W] or [H, W, C] (C == channels) -> float32 [C, height, width].
  Tensor operator()(const Tensor& image) const;
  // read_image(path, channels), then the above; errors name the file.
  Tensor load(const std::string& path) const;
  // decode_image(bytes, name, channels), then the above (an uploaded file).
  Tensor decode(std::span<const uint8_t> bytes, const std::string& name) const;

  // {"kind": "image", "channels": 1, "size": [28, 28], "mean": [0.286], "std": [0.353]}
  // (docs/file-formats.md, source key "input_transform").
  std::string to_json() const;
  // Throws naming `what` (the file it came from) and the problem.
  static ImagePreprocess from_json(const std::string& text, const std::string& what);
  bool operator==(const ImagePreprocess&) const = default;
};

}  // namespace ember::data

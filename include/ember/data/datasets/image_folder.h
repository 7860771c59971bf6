// ImageFolder: root/<class>/<image>, one class per subfolder, PNG/JPEG/BMP/
// GIF/TGA decoded with stb_image.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

struct ImageFolderOptions {
  // Output channels: 1 (grey), 3 (RGB, torchvision's default) or 4.
  int channels = 3;
  // Bilinear resize to (height, width); {0, 0} keeps each image's size.
  std::pair<int64_t, int64_t> resize = {0, 0};
  // File extensions (lower case) that count as images.
  std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga"};
};

// Samples (image uint8 [H, W, C], label int64 []), classes and files in
// sorted order; images are decoded on get (compose ToTensor for float CHW,
// wrap in CachedDataset to decode once). An unreadable image is an error
// naming its file and index.
class ImageFolder : public Dataset {
 public:
  explicit ImageFolder(const std::string& root, ImageFolderOptions options = {});
  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  Sample get(int64_t index) const override;
  const std::vector<std::string>& classes() const { return classes_; }
  // (path, class index) of every sample.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }

 private:
  ImageFolderOptions options_;
  std::vector<std::string> classes_;
  std::vector<std::pair<std::string, int64_t>> samples_;
};

// Decodes one image file to uint8 [H, W, channels] (channels 0 keeps the
// file's own).
Tensor read_image(const std::string& path, int channels = 0);
// Bilinear resize of uint8 [H, W, C] (align_corners = false), rounded.
Tensor resize_image(const Tensor& image, int64_t height, int64_t width);

}  // namespace ember::data

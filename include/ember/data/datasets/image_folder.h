// ImageFolder: root/<class>/<image>, one class per subfolder, PNG/JPEG/BMP/
// GIF/TGA decoded with stb_image.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

// Largest image read_image decodes by default: 64 Mpixels (8192 x 8192), at
// most 256 MB decoded. Images are untrusted files: their header dimensions
// are checked against this and against the file size before decoding.
inline constexpr int64_t kDefaultMaxImagePixels = int64_t{1} << 26;

struct ImageFolderOptions {
  // Output channels: 1 (grey), 3 (RGB, torchvision's default) or 4.
  int channels = 3;
  // Bilinear resize to (height, width); {0, 0} keeps each image's size.
  std::pair<int64_t, int64_t> resize = {0, 0};
  // File extensions (lower case) that count as images.
  std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga"};
  // Images with more pixels (width x height, from the header) are an error.
  int64_t max_pixels = kDefaultMaxImagePixels;
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
// file's own). The header's width and height are read first and checked
// before anything is decoded: at most max_pixels pixels, and no more than
// the format's best compression can encode in the file's size (a 54-byte BMP
// cannot hold 268 Mpixels). Errors name the file and the problem.
Tensor read_image(const std::string& path, int channels = 0, int64_t max_pixels = kDefaultMaxImagePixels);
// The same for an image already in memory (an HTTP upload); `name` stands
// for the file in errors.
Tensor decode_image(std::span<const uint8_t> bytes, const std::string& name, int channels = 0,
                    int64_t max_pixels = kDefaultMaxImagePixels);
// Bilinear resize of uint8 [H, W, C] (align_corners = false), rounded.
Tensor resize_image(const Tensor& image, int64_t height, int64_t width);

}  // namespace ember::data

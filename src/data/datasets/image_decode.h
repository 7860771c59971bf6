// Image decoders behind read_image: libpng for PNG, libjpeg-turbo for JPEG,
// stb_image for BMP/GIF/TGA. Each reads the header first and asks
// `check_size` to accept the dimensions before it allocates any pixels.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ember::data::detail {

// 8-bit pixels, row-major, `channels` per pixel (1 grey, 2 grey+alpha, 3 RGB,
// 4 RGBA) as the file stores them.
struct DecodedImage {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

// Throws when the header's width x height may not be decoded.
using SizeCheck = std::function<void(int64_t width, int64_t height)>;

enum class ImageFormat { kPng, kJpeg, kOther };
ImageFormat sniff_image_format(std::span<const uint8_t> bytes);

DecodedImage decode_png(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size);
DecodedImage decode_jpeg(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size);
// BMP, GIF (first frame) and TGA through stb_image.
DecodedImage decode_stb(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size);

// stb_image's conversions between 1-4 channels (grey from RGB is
// (77 R + 150 G + 29 B) >> 8; an added alpha is 255); `to` == 0 keeps `from`.
std::vector<uint8_t> convert_channels(const std::vector<uint8_t>& pixels, int from, int to);

}  // namespace ember::data::detail

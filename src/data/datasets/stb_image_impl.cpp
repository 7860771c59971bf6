// The one translation unit that compiles stb_image (Debian's libstb-dev), for
// the formats libpng and libjpeg-turbo do not cover: BMP, GIF and TGA.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_ONLY_TGA
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

#include <climits>
#include <memory>

#include "ember/core/error.h"
#include "image_decode.h"

namespace ember::data::detail {

DecodedImage decode_stb(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size) {
  EMBER_CHECK(bytes.size() <= INT_MAX, "read_image: '{}' is {} bytes, larger than stb_image reads (2 GiB)", path,
              bytes.size());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, c = 0;
  EMBER_CHECK(stbi_info_from_memory(bytes.data(), len, &w, &h, &c) == 1,
              "read_image: cannot decode '{}': {} (is it a PNG/JPEG/BMP/GIF/TGA image?)", path,
              stbi_failure_reason() ? stbi_failure_reason() : "unknown format");
  check_size(w, h);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load_from_memory(bytes.data(), len, &w, &h, &c, 0),
                                                   stbi_image_free);
  EMBER_CHECK(pixels, "read_image: cannot decode '{}': {}", path,
              stbi_failure_reason() ? stbi_failure_reason() : "unknown error");
  check_size(w, h);  // the decoded size, in case it differs from the header's
  EMBER_CHECK(c >= 1 && c <= 4, "read_image: '{}': stb_image gave {} channels", path, c);
  const size_t n = static_cast<size_t>(w) * static_cast<size_t>(h) * static_cast<size_t>(c);
  return DecodedImage{w, h, c, std::vector<uint8_t>(pixels.get(), pixels.get() + n)};
}

}  // namespace ember::data::detail

// Channel conversion shared by the image decoders (the same rules as
// stb_image's, which read_image used for every format before).
#include <cstddef>

#include "ember/core/error.h"
#include "image_decode.h"

namespace ember::data::detail {

namespace {

uint8_t luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 77 + rgb[1] * 150 + rgb[2] * 29) >> 8);
}

}  // namespace

std::vector<uint8_t> convert_channels(const std::vector<uint8_t>& pixels, int from, int to) {
  EMBER_CHECK(from >= 1 && from <= 4 && to >= 0 && to <= 4, "convert_channels: {} -> {} channels", from, to);
  if (to == 0 || to == from) return pixels;
  const size_t n = pixels.size() / static_cast<size_t>(from);
  std::vector<uint8_t> out(n * static_cast<size_t>(to));
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* s = pixels.data() + i * static_cast<size_t>(from);
    uint8_t* d = out.data() + i * static_cast<size_t>(to);
    const bool colour = from >= 3;
    const uint8_t grey = colour ? luma(s) : s[0];
    const uint8_t alpha = (from == 2 || from == 4) ? s[from - 1] : 255;
    switch (to) {
      case 1: d[0] = grey; break;
      case 2: d[0] = grey; d[1] = alpha; break;
      case 3:
      case 4:
        d[0] = colour ? s[0] : grey;
        d[1] = colour ? s[1] : grey;
        d[2] = colour ? s[2] : grey;
        if (to == 4) d[3] = alpha;
        break;
    }
  }
  return out;
}

}  // namespace ember::data::detail

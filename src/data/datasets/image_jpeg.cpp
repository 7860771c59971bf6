// JPEG through libjpeg-turbo's TurboJPEG API, which turns libjpeg's errors
// into return codes (no longjmp reaches this code).
#include <turbojpeg.h>

#include <climits>
#include <memory>

#include "ember/core/error.h"
#include "image_decode.h"

namespace ember::data::detail {

namespace {

struct TjDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjDeleter>;

// Adobe CMYK JPEGs store inverted inks: R = C * K / 255 on the stored values
// (what stb_image and Pillow's RGB conversion give).
std::vector<uint8_t> cmyk_to_rgb(const std::vector<uint8_t>& cmyk) {
  std::vector<uint8_t> rgb(cmyk.size() / 4 * 3);
  for (size_t i = 0, o = 0; i + 3 < cmyk.size(); i += 4, o += 3) {
    const unsigned k = cmyk[i + 3];
    for (size_t c = 0; c < 3; ++c) rgb[o + c] = static_cast<uint8_t>((cmyk[i + c] * k + 127) / 255);
  }
  return rgb;
}

}  // namespace

DecodedImage decode_jpeg(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size) {
  TjHandle tj(tjInitDecompress());
  EMBER_CHECK(tj != nullptr, "read_image: '{}': libjpeg-turbo could not start: {}", path, tjGetErrorStr2(nullptr));
  EMBER_CHECK(bytes.size() <= ULONG_MAX, "read_image: '{}' is too large for libjpeg-turbo", path);
  const auto* data = bytes.data();
  const auto size = static_cast<unsigned long>(bytes.size());
  int w = 0, h = 0, subsampling = 0, colourspace = 0;
  EMBER_CHECK(tjDecompressHeader3(tj.get(), data, size, &w, &h, &subsampling, &colourspace) == 0,
              "read_image: cannot decode '{}': JPEG: {}", path, tjGetErrorStr2(tj.get()));
  check_size(w, h);
  const bool cmyk = colourspace == TJCS_CMYK || colourspace == TJCS_YCCK;
  const int stored = colourspace == TJCS_GRAY ? 1 : cmyk ? 4 : 3;
  const int format = colourspace == TJCS_GRAY ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  DecodedImage image{w, h, stored, std::vector<uint8_t>(static_cast<size_t>(w) * h * stored)};
  // A warning (corrupt or truncated entropy data) fails the decode instead of
  // returning grey-filled blocks; progressive files are limited to 500 scans
  // (libjpeg-turbo's guard against scan floods).
  EMBER_CHECK(tjDecompress2(tj.get(), data, size, image.pixels.data(), w, 0, h, format,
                            TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) == 0,
              "read_image: cannot decode '{}': JPEG: {}", path, tjGetErrorStr2(tj.get()));
  if (cmyk) {
    image.pixels = cmyk_to_rgb(image.pixels);
    image.channels = 3;
  }
  return image;
}

}  // namespace ember::data::detail

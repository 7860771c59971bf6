// ImageFolder: scans root/<class>/ once, decodes each image on get
// (libpng, libjpeg-turbo, or stb_image for BMP/GIF/TGA).
#include "ember/data/datasets/image_folder.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "ember/ops/factory.h"
#include "image_decode.h"

namespace ember::data {

namespace fs = std::filesystem;

namespace {

// The most pixels each format can encode per byte of file, from its best case
// (generous: real images stay far below). A header claiming more is corrupt or
// hostile; stb would allocate and decode the full canvas regardless (a minute
// and 2 GB for a 200-byte GIF or TGA).
struct FormatBound {
  const char* name;
  int64_t pixels_per_byte;
};

FormatBound format_bound(std::span<const uint8_t> b) {
  auto starts = [&](std::initializer_list<unsigned char> magic) {
    return b.size() >= magic.size() && std::equal(magic.begin(), magic.end(), b.begin());
  };
  // BMP: stb reads only uncompressed BMPs, 1 bit per pixel at the least.
  if (starts({'B', 'M'})) return {"BMP", 8};
  // PNG: deflate expands at most 1032:1, and 1-bit pixels pack 8 per byte.
  if (starts({0x89, 'P', 'N', 'G'})) return {"PNG", 8 * 1032};
  // GIF: a 12-bit LZW code expands to at most 4096 pixels, about 2730 per
  // byte. (stb allocates the header's logical screen even when the frame is
  // tiny; this bounds that canvas too.)
  if (starts({'G', 'I', 'F', '8'})) return {"GIF", 4096};
  // JPEG: progressive end-of-band runs skip many blocks per code.
  if (starts({0xFF, 0xD8})) return {"JPEG", 16384};
  // TGA has no magic number: RLE packets repeat at most 128 pixels per
  // header byte + 1-byte pixel.
  return {"TGA", 64};
}

}  // namespace

namespace detail {

ImageFormat sniff_image_format(std::span<const uint8_t> b) {
  static constexpr uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() >= 8 && std::equal(std::begin(kPngMagic), std::end(kPngMagic), b.begin())) return ImageFormat::kPng;
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  return ImageFormat::kOther;
}

}  // namespace detail

Tensor read_image(const std::string& path, int channels, int64_t max_pixels) {
  EMBER_CHECK(channels >= 0 && channels <= 4,
              "read_image: channels must be 0 (as stored), 1, 2, 3 or 4, got {}", channels);
  std::error_code ec;
  EMBER_CHECK(fs::is_regular_file(path, ec), "read_image: cannot open '{}': no such file", path);
  std::vector<unsigned char> bytes;
  {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    EMBER_CHECK(f.good(), "read_image: cannot open '{}': {}", path, std::strerror(errno));
    const std::streamoff size = f.tellg();
    EMBER_CHECK(size >= 0 && size <= INT32_MAX, "read_image: '{}' is {} bytes, larger than read_image reads (2 GiB)",
                path, static_cast<int64_t>(size));
    bytes.resize(static_cast<size_t>(size));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(bytes.data()), size);
    EMBER_CHECK(f.good() || size == 0, "read_image: reading '{}' failed: {}", path, std::strerror(errno));
  }
  return decode_image(bytes, path, channels, max_pixels);
}

Tensor decode_image(std::span<const uint8_t> bytes, const std::string& path, int channels, int64_t max_pixels) {
  EMBER_CHECK(channels >= 0 && channels <= 4,
              "read_image: channels must be 0 (as stored), 1, 2, 3 or 4, got {}", channels);
  // Dimensions from the header first: nothing is allocated for the pixels
  // until they pass the limits.
  EMBER_CHECK(bytes.size() <= INT32_MAX, "read_image: '{}' is {} bytes, larger than read_image reads (2 GiB)", path,
              bytes.size());
  const FormatBound bound = format_bound(bytes);
  const int64_t len = static_cast<int64_t>(bytes.size());
  auto check_size = [&](int64_t w, int64_t h) {
    const int64_t pixels = w * h;
    EMBER_CHECK(w > 0 && h > 0, "read_image: '{}': the {} header declares a {}x{} image", path, bound.name, w, h);
    EMBER_CHECK(pixels <= max_pixels,
                "read_image: '{}': the {} header declares {}x{} = {} pixels, more than the limit of {} "
                "(ImageFolderOptions::max_pixels)", path, bound.name, w, h, pixels, max_pixels);
    EMBER_CHECK(pixels <= bound.pixels_per_byte * len,
                "read_image: '{}': the {} header declares {}x{} = {} pixels, more than a {}-byte {} file can "
                "encode (at most {} pixels per byte); the file is corrupt or truncated",
                path, bound.name, w, h, pixels, len, bound.name, bound.pixels_per_byte);
  };
  const std::span<const uint8_t> view = bytes;
  detail::DecodedImage image;
  switch (detail::sniff_image_format(view)) {
    case detail::ImageFormat::kPng: image = detail::decode_png(view, path, check_size); break;
    case detail::ImageFormat::kJpeg: image = detail::decode_jpeg(view, path, check_size); break;
    case detail::ImageFormat::kOther: image = detail::decode_stb(view, path, check_size); break;
  }
  const int out_c = channels == 0 ? image.channels : channels;
  std::vector<uint8_t> pixels = detail::convert_channels(image.pixels, image.channels, channels);
  Tensor out = empty({image.height, image.width, out_c}, kUInt8);
  EMBER_CHECK(pixels.size() == static_cast<size_t>(out.numel()), "read_image: '{}': decoded {} bytes for {}x{}x{}",
              path, pixels.size(), image.height, image.width, out_c);
  std::memcpy(out.data_ptr(), pixels.data(), pixels.size());
  return out;
}

Tensor resize_image(const Tensor& image_in, int64_t height, int64_t width) {
  EMBER_CHECK(image_in.dim() == 3 && image_in.dtype() == kUInt8 && height > 0 && width > 0,
              "resize_image: expected a uint8 image [H, W, C] and a positive size, got "
              "Tensor[{}] {} and ({}, {})", fmt::join(image_in.sizes(), ", "),
              to_string(image_in.dtype()), height, width);
  Tensor image = image_in.contiguous();
  const int64_t h = image.size(0), w = image.size(1), c = image.size(2);
  if (h == height && w == width) return image;
  Tensor out = empty({height, width, c}, kUInt8);
  const uint8_t* src = image.data_ptr<uint8_t>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  // Source index (d + 0.5) * in / out - 0.5 clamped at 0 (align_corners = false).
  auto source = [](int64_t d, int64_t in, int64_t outn, int64_t& i0, int64_t& i1, double& l) {
    double s = std::max((static_cast<double>(d) + 0.5) * static_cast<double>(in) /
                            static_cast<double>(outn) - 0.5, 0.0);
    i0 = std::min(static_cast<int64_t>(s), in - 1);
    i1 = std::min(i0 + 1, in - 1);
    l = s - static_cast<double>(i0);
  };
  for (int64_t r = 0; r < height; ++r) {
    int64_t y0, y1;
    double ly;
    source(r, h, height, y0, y1, ly);
    for (int64_t col = 0; col < width; ++col) {
      int64_t x0, x1;
      double lx;
      source(col, w, width, x0, x1, lx);
      for (int64_t ch = 0; ch < c; ++ch) {
        auto px = [&](int64_t y, int64_t x) { return static_cast<double>(src[(y * w + x) * c + ch]); };
        double v = (1 - ly) * ((1 - lx) * px(y0, x0) + lx * px(y0, x1)) +
                   ly * ((1 - lx) * px(y1, x0) + lx * px(y1, x1));
        dst[(r * width + col) * c + ch] = static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0, 255.0));
      }
    }
  }
  return out;
}

ImageFolder::ImageFolder(const std::string& root, ImageFolderOptions options)
    : options_(std::move(options)) {
  std::error_code ec;
  EMBER_CHECK(fs::is_directory(root, ec),
              "ImageFolder: '{}' is not a directory; expected root/<class>/<image> folders", root);
  EMBER_CHECK(options_.channels >= 1 && options_.channels <= 4,
              "ImageFolder: channels must be 1, 2, 3 or 4, got {}", options_.channels);
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory()) classes_.push_back(entry.path().filename().string());
  std::sort(classes_.begin(), classes_.end());
  EMBER_CHECK(!classes_.empty(), "ImageFolder: couldn't find any class folder in '{}'", root);
  for (size_t k = 0; k < classes_.size(); ++k) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(root) / classes_[k])) {
      if (!entry.is_regular_file()) continue;
      std::string ext = entry.path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (std::find(options_.extensions.begin(), options_.extensions.end(), ext) !=
          options_.extensions.end())
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    for (auto& f : files) samples_.emplace_back(std::move(f), static_cast<int64_t>(k));
  }
  EMBER_CHECK(!samples_.empty(), "ImageFolder: found no valid image file in the class folders of "
              "'{}'; supported extensions are [{}]", root, fmt::join(options_.extensions, ", "));
}

Sample ImageFolder::get(int64_t index) const {
  EMBER_CHECK_INDEX(index >= 0 && index < size(),
                    "ImageFolder: index {} is out of range for a dataset of size {}", index, size());
  const auto& [path, label] = samples_[static_cast<size_t>(index)];
  Tensor image;
  try {
    image = read_image(path, options_.channels, options_.max_pixels);
  } catch (const Error& e) {
    EMBER_ERROR("ImageFolder: sample index {}: {}", index, e.what());
  }
  if (options_.resize.first > 0 && options_.resize.second > 0)
    image = resize_image(image, options_.resize.first, options_.resize.second);
  return Sample(image, scalar_tensor(label, kInt64));
}

}  // namespace ember::data

// PNG through libpng. libpng reports errors by longjmp; the function that
// calls setjmp (read_png_steps) holds only trivially destructible locals, and
// everything with a destructor lives in its caller, so a longjmp skips no
// destructor. Errors come back as a message and become an ember::Error there.
#include <png.h>

#include <csetjmp>
#include <cstring>

#include "ember/core/error.h"
#include "image_decode.h"

namespace ember::data::detail {

namespace {

struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char error[256] = {};
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::strncpy(src->error, message ? message : "unknown error", sizeof(src->error) - 1);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}  // libpng recovers; nothing to report

void read_from_memory(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) png_error(png, "the file ends before the image data does (truncated)");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

// What the caller provides once the header has been read: the size check
// (may throw) and the pixel buffer for `rows` rows of `row_bytes`.
struct PngSink {
  const SizeCheck* check_size = nullptr;
  DecodedImage* image = nullptr;
  void allocate(png_uint_32 w, png_uint_32 h, int channels) {
    (*check_size)(w, h);
    image->width = static_cast<int>(w);
    image->height = static_cast<int>(h);
    image->channels = channels;
    image->pixels.resize(static_cast<size_t>(w) * h * static_cast<size_t>(channels));
  }
};

// Returns false after a libpng error (message in src.error).
bool read_png_steps(png_structp png, png_infop info, PngSink& sink) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  const png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  const int colour = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  // To 8-bit grey, grey+alpha, RGB or RGBA, as stb_image did: palettes
  // expanded, tRNS to alpha, 16-bit samples keep their high byte.
  if (colour == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (colour == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_strip_16(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  if (channels < 1 || channels > 4 || png_get_rowbytes(png, info) != static_cast<size_t>(w) * channels)
    png_error(png, "unexpected pixel layout after conversion to 8 bits");
  sink.allocate(w, h, channels);  // throws (an ember::Error) past the limits; nothing to skip here
  uint8_t* base = sink.image->pixels.data();
  const size_t stride = static_cast<size_t>(w) * static_cast<size_t>(channels);
  for (int pass = 0; pass < passes; ++pass)
    for (png_uint_32 y = 0; y < h; ++y) png_read_row(png, base + y * stride, nullptr);
  return true;
}

class PngReadStruct {
 public:
  explicit PngReadStruct(PngSource& src)
      : png_(png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_png_error, on_png_warning)),
        info_(png_ ? png_create_info_struct(png_) : nullptr) {}
  ~PngReadStruct() { png_destroy_read_struct(&png_, info_ ? &info_ : nullptr, nullptr); }
  PngReadStruct(const PngReadStruct&) = delete;
  PngReadStruct& operator=(const PngReadStruct&) = delete;
  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_;
  png_infop info_;
};

}  // namespace

DecodedImage decode_png(std::span<const uint8_t> bytes, const std::string& path, const SizeCheck& check_size) {
  PngSource src{bytes.data(), bytes.size(), 0, {}};
  PngReadStruct reader(src);
  EMBER_CHECK(reader.png() && reader.info(), "read_image: '{}': libpng could not allocate its reader", path);
  png_set_read_fn(reader.png(), &src, read_from_memory);
  // Bound what ancillary chunks (text, ICC profiles) may allocate; the
  // pixels are bounded by check_size.
  png_set_chunk_malloc_max(reader.png(), 8u << 20);
  png_set_chunk_cache_max(reader.png(), 1000);
  DecodedImage image;
  PngSink sink{&check_size, &image};
  EMBER_CHECK(read_png_steps(reader.png(), reader.info(), sink), "read_image: cannot decode '{}': PNG: {}", path,
              src.error);
  return image;
}

}  // namespace ember::data::detail

// read_image's decoders: libpng (bit depths, palettes with transparency,
// Adam7 interlacing), libjpeg-turbo (CMYK, corrupt data) and the channel
// conversions, against pixel values that follow from the file formats
// (fixtures: tests/data/images/gen_images.py). And every former fuzz finding
// of the image target (tests/fuzz/corpus/image/finding-*) decodes or fails
// with ember::Error.
#include <filesystem>
#include <fstream>

#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::TempDir;

namespace {
std::string image_file(const char* name) { return std::string(EMBER_TEST_DATA_DIR) + "/images/" + name; }

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST(DataImageDecode, Png16BitKeepsTheHighByte) {
  expect_values(read_image(image_file("grey16_2x2.png")), {2, 2, 1}, {0x12, 0xAB, 0xFF, 0x00});
}

TEST(DataImageDecode, Png1BitGreyExpandsTo0And255) {
  expect_values(read_image(image_file("grey1_8x1.png")), {1, 8, 1}, {255, 0, 255, 255, 0, 0, 255, 0});
}

TEST(DataImageDecode, PngPaletteWithTransparencyGivesRgba) {
  expect_values(read_image(image_file("palette_trns_3x1.png")), {1, 3, 4},
                {255, 0, 0, 0, 0, 255, 0, 128, 0, 0, 255, 255});
  // To 3 channels the alpha is dropped; to 2, grey is (77 R + 150 G + 29 B) >> 8.
  expect_values(read_image(image_file("palette_trns_3x1.png"), 3), {1, 3, 3}, {255, 0, 0, 0, 255, 0, 0, 0, 255});
  expect_values(read_image(image_file("palette_trns_3x1.png"), 2), {1, 3, 2},
                {(255 * 77) >> 8, 0, (255 * 150) >> 8, 128, (255 * 29) >> 8, 255});
}

TEST(DataImageDecode, PngAdam7InterlacedDecodesEveryPass) {
  std::vector<double> want;
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) want.insert(want.end(), {10.0 * y + x, 100.0 + x, 200.0 - y});
  expect_values(read_image(image_file("adam7_rgb_3x3.png")), {3, 3, 3}, want);
  // Grey from RGB and back: (77 R + 150 G + 29 B) >> 8, then replicated.
  Tensor grey = read_image(image_file("adam7_rgb_3x3.png"), 1);
  Tensor back = read_image(image_file("adam7_rgb_3x3.png"), 4);
  ASSERT_EQ(grey.sizes().vec(), (std::vector<int64_t>{3, 3, 1}));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) {
      const int r = 10 * y + x, g = 100 + x, b = 200 - y;
      EXPECT_EQ(grey.index({y, x, 0}).item<int64_t>(), (r * 77 + g * 150 + b * 29) >> 8);
      EXPECT_EQ(back.index({y, x, 3}).item<int64_t>(), 255);  // no alpha stored: opaque
    }
}

TEST(DataImageDecode, CmykJpegConvertsToRgb) {
  Tensor img = read_image(image_file("cmyk_16x8.jpg"));
  ASSERT_EQ(img.sizes().vec(), (std::vector<int64_t>{8, 16, 3}));
  Tensor f = img.to(kFloat32);
  // Left half C,M,Y,K = 200,100,50,255 -> (200, 100, 50); right 255,255,255,128 -> 128.
  const float left[3] = {200, 100, 50};
  for (int y = 0; y < 8; ++y)
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(f.index({y, 2, c}).item<float>(), left[c], 3.0f) << y << "," << c;
      EXPECT_NEAR(f.index({y, 13, c}).item<float>(), 128.0f, 3.0f) << y << "," << c;
    }
}

TEST(DataImageDecode, CorruptAndTruncatedFilesNameTheFileAndTheProblem) {
  TempDir dir;
  std::vector<uint8_t> png = read_bytes(image_file("adam7_rgb_3x3.png"));
  // Cut inside the IDAT chunk.
  std::vector<uint8_t> cut(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size()) - 20);
  ember::testing::write_bytes(dir.file("cut.png"), cut);
  expect_error([&] { (void)read_image(dir.file("cut.png")); }, {"cannot decode", "cut.png", "PNG"});
  // A flipped byte in IHDR: its CRC no longer matches.
  std::vector<uint8_t> flipped = png;
  flipped[16 + 3] ^= 0x01;  // image width's low byte
  ember::testing::write_bytes(dir.file("crc.png"), flipped);
  expect_error([&] { (void)read_image(dir.file("crc.png")); }, {"cannot decode", "crc.png", "PNG", "CRC"});

  std::vector<uint8_t> jpg = read_bytes(image_file("cmyk_16x8.jpg"));
  std::vector<uint8_t> half(jpg.begin(), jpg.begin() + static_cast<std::ptrdiff_t>(jpg.size()) * 3 / 4);
  ember::testing::write_bytes(dir.file("half.jpg"), half);
  // libjpeg-turbo would fill the missing blocks with grey and warn; the
  // warning fails the decode instead.
  expect_error([&] { (void)read_image(dir.file("half.jpg")); }, {"cannot decode", "half.jpg", "JPEG"});
}

// Findings 7-9 of the long fuzz run of 2026-12-01, which reached bugs in
// Debian's stb_image (git20220908): a PNG with an empty data chunk (memcpy
// from NULL), JPEG Huffman tables that overflow stb's size table, and an
// oversized shift in its Huffman decoding. PNG and JPEG now go through libpng
// and libjpeg-turbo. Under scripts/sanitize asan these run instrumented.
TEST(DataImageDecode, FormerFuzzFindingsFailCleanly) {
  const std::filesystem::path corpus = std::filesystem::path(EMBER_TEST_DATA_DIR) / ".." / "fuzz" / "corpus" / "image";
  int findings = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    if (entry.path().filename().string().rfind("finding-", 0) != 0) continue;
    ++findings;
    try {
      Tensor img = read_image(entry.path().string(), 3);
      EXPECT_EQ(img.size(2), 3);
      (void)resize_image(img, 5, 7);
    } catch (const ember::Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(entry.path().filename().string()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(findings, 9);
  EXPECT_GT(refused, 0);
}

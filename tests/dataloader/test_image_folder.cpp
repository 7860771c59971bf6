// ImageFolder: class folders, PNG/JPEG decoding, resize, unreadable images
// (decoder details: test_image_decode.cpp).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include <fstream>

#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::TempDir;
using ember::testing::write_text;

namespace {
// A w x h RGB PNG whose pixel (r, c) is (r * 10 + c, value, 255 - value).
void write_png(const std::string& path, int w, int h, uint8_t value) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::vector<uint8_t> px;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      px.push_back(static_cast<uint8_t>(r * 10 + c));
      px.push_back(value);
      px.push_back(static_cast<uint8_t>(255 - value));
    }
  ASSERT_TRUE(stbi_write_png(path.c_str(), w, h, 3, px.data(), w * 3));
}
}  // namespace

TEST(DataImageFolder, ClassesFromSubfoldersSorted) {
  TempDir dir;
  write_png(dir.file("dog/b.png"), 3, 2, 7);
  write_png(dir.file("dog/a.png"), 3, 2, 9);
  write_png(dir.file("cat/z.PNG"), 3, 2, 1);
  write_text(dir.file("cat/notes.txt"), "not an image");
  std::filesystem::path jpg = dir.file("cat/y.jpg");
  std::vector<uint8_t> grey(16 * 16, 128);
  ASSERT_TRUE(stbi_write_jpg(jpg.c_str(), 16, 16, 1, grey.data(), 95));
  ImageFolder ds(dir.path().string());
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.size(), 4);
  EXPECT_EQ(ds.samples()[2].first, dir.file("dog/a.png"));
  Sample s = ds.get(2);
  EXPECT_EQ(s[1].tensor().item<int64_t>(), 1);
  // PNG is lossless: exact pixels, [H, W, C].
  expect_values(s[0].tensor(), {2, 3, 3},
                {0, 9, 246, 1, 9, 246, 2, 9, 246, 10, 9, 246, 11, 9, 246, 12, 9, 246});
  // The JPEG (grey, expanded to RGB) decodes close to 128.
  Tensor j = ds.get(0)[0].tensor();  // cat/y.jpg sorts before cat/z.PNG
  EXPECT_EQ(j.sizes().vec(), (std::vector<int64_t>{16, 16, 3}));
  EXPECT_NEAR(j.to(kFloat32).mean().item<double>(), 128.0, 2.0);
}

TEST(DataImageFolder, ResizeAndGrey) {
  TempDir dir;
  write_png(dir.file("only/x.png"), 4, 4, 100);
  ImageFolderOptions o;
  o.channels = 1;
  o.resize = {2, 2};
  ImageFolder ds(dir.path().string(), o);
  Tensor img = ds.get(0)[0].tensor();
  EXPECT_EQ(img.sizes().vec(), (std::vector<int64_t>{2, 2, 1}));
  // Bilinear 4 -> 2 samples at source 0.5 and 2.5 (averages of 2x2 blocks).
  Tensor rgb = tensor<uint8_t>({0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}, {4, 4, 1});
  expect_values(resize_image(rgb, 2, 2), {2, 2, 1}, {5, 9, 21, 25});
}

TEST(DataImageFolder, UnreadableImageNamesFileAndIndex) {
  TempDir dir;
  write_png(dir.file("a/good.png"), 2, 2, 0);
  write_text(dir.file("a/broken.png"), "this is not a png");
  ImageFolder ds(dir.path().string());
  ASSERT_EQ(ds.size(), 2);  // listed, so the data set is never silently shortened
  expect_error([&] { (void)ds.get(0); }, {"sample index 0", "broken.png", "cannot decode"});
  EXPECT_EQ(ds.get(1)[0].tensor().size(0), 2);
  // Through the loader, the index reaches the caller.
  DataLoader loader(std::make_shared<ImageFolder>(dir.path().string()),
                    DataLoaderOptions().with_batch_size(2).with_num_workers(2));
  expect_error([&] { for (auto& b : loader) (void)b; }, {"sample index 0", "broken.png"});
  expect_error([&] { ImageFolder(dir.file("missing")); }, {"missing", "not a directory"});
}

namespace {
void put16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}
// A 54-byte BMP header (BITMAPINFOHEADER, 24 bpp, uncompressed) and no pixels.
std::vector<uint8_t> bmp_header(uint32_t w, uint32_t h) {
  std::vector<uint8_t> b{'B', 'M'};
  put32(b, 54);
  put32(b, 0);
  put32(b, 54);  // pixel data offset
  put32(b, 40);  // header size
  put32(b, w);
  put32(b, h);
  put16(b, 1);
  put16(b, 24);
  for (int i = 0; i < 6; ++i) put32(b, 0);  // no compression, sizes, resolution, palette
  return b;
}
// An 18-byte TGA header (RLE true colour, 24 bpp) followed by `data` bytes.
std::vector<uint8_t> tga_header(uint32_t w, uint32_t h, size_t data) {
  std::vector<uint8_t> b{0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  put16(b, w);
  put16(b, h);
  b.push_back(24);
  b.push_back(0);
  b.resize(b.size() + data, 0);
  return b;
}
// A GIF89a header with an empty global colour table flag and `data` bytes.
std::vector<uint8_t> gif_header(uint32_t w, uint32_t h, size_t data) {
  std::vector<uint8_t> b{'G', 'I', 'F', '8', '9', 'a'};
  put16(b, w);
  put16(b, h);
  b.push_back(0);
  b.push_back(0);
  b.push_back(0);
  b.resize(b.size() + data, 0);
  return b;
}
}  // namespace

TEST(DataImageFolder, TinyFilesCannotDeclareHugeImages) {
  TempDir dir;
  using ember::testing::write_bytes;
  // Issue 13: a 54-byte BMP decoded to an 805 MB black image; 82-216-byte
  // TGA/GIF files took a minute and 2 GB each. The header's dimensions are now
  // checked before anything is decoded.
  write_bytes(dir.file("huge.bmp"), bmp_header(16384, 16384));
  expect_error([&] { (void)read_image(dir.file("huge.bmp")); },
               {"huge.bmp", "BMP header declares 16384x16384 = 268435456 pixels", "more than the limit of 67108864"});
  write_bytes(dir.file("small.bmp"), bmp_header(1000, 1000));  // 1 Mpixel in 54 bytes
  expect_error([&] { (void)read_image(dir.file("small.bmp")); },
               {"small.bmp", "1000x1000 = 1000000 pixels", "more than a 54-byte BMP file can encode"});
  write_bytes(dir.file("rle.tga"), tga_header(4000, 4000, 64));
  expect_error([&] { (void)read_image(dir.file("rle.tga")); }, {"rle.tga", "TGA", "more than a 82-byte TGA"});
  write_bytes(dir.file("screen.gif"), gif_header(8000, 8000, 203));
  expect_error([&] { (void)read_image(dir.file("screen.gif")); }, {"screen.gif", "GIF", "216-byte GIF"});
  write_bytes(dir.file("wide.gif"), gif_header(65535, 65535, 3));
  expect_error([&] { (void)read_image(dir.file("wide.gif")); }, {"wide.gif", "more than the limit"});
  // Through ImageFolder: the error names the sample.
  write_bytes(dir.file("cls/a.bmp"), bmp_header(1000, 1000));
  ImageFolder ds(dir.path().string());
  expect_error([&] { (void)ds.get(0); }, {"sample index 0", "a.bmp", "can encode"});
}

TEST(DataImageFolder, RealImagesPassTheLimitsAndMaxPixelsIsConfigurable) {
  TempDir dir;
  // Well-compressed but genuine files stay under the per-format bounds.
  std::vector<uint8_t> solid(300 * 200 * 3, 90);
  ASSERT_TRUE(stbi_write_tga(dir.file("solid.tga").c_str(), 300, 200, 3, solid.data()));  // RLE
  ASSERT_TRUE(stbi_write_png(dir.file("solid.png").c_str(), 300, 200, 3, solid.data(), 300 * 3));
  ASSERT_TRUE(stbi_write_bmp(dir.file("solid.bmp").c_str(), 300, 200, 3, solid.data()));
  ASSERT_TRUE(stbi_write_jpg(dir.file("solid.jpg").c_str(), 300, 200, 3, solid.data(), 90));
  for (const char* f : {"solid.tga", "solid.png", "solid.bmp", "solid.jpg"}) {
    Tensor t = read_image(dir.file(f));
    EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{200, 300, 3})) << f;
    EXPECT_NEAR(t.to(kFloat32).mean().item<float>(), 90.0f, 2.0f) << f;
  }
  write_png(dir.file("c/x.png"), 4, 4, 1);
  EXPECT_EQ(read_image(dir.file("c/x.png"), 3, 16).size(0), 4);
  expect_error([&] { (void)read_image(dir.file("c/x.png"), 3, 15); }, {"x.png", "16 pixels", "limit of 15"});
  ImageFolderOptions opt;
  opt.max_pixels = 8;
  ImageFolder ds(dir.path().string(), opt);
  expect_error([&] { (void)ds.get(0); }, {"x.png", "limit of 8"});
}

// Fuzz findings 3 and 6 (tests/data/fuzz_regressions/): a JPEG Huffman table
// whose 16 code counts add up past 256 made Debian's stb_image write past its
// 257-entry size table (ASan: stb_image.h stbi__build_huffman). JPEGs now go
// through libjpeg-turbo, which refuses such a table ("Bogus Huffman table
// definition"); genuine JPEGs still decode.
TEST(DataImageFolder, JpegHuffmanTableWithMoreThan256CodesIsRefused) {
  const std::string crash = std::string(EMBER_TEST_DATA_DIR) + "/fuzz_regressions/jpeg_dht_over_256_codes.jpg";
  expect_error([&] { (void)read_image(crash); }, {"jpeg_dht_over_256_codes.jpg", "JPEG", "Huffman table"});
  // Finding 6: the table sits before the frame header.
  const std::string before_sof = std::string(EMBER_TEST_DATA_DIR) + "/fuzz_regressions/jpeg_dht_before_sof.jpg";
  expect_error([&] { (void)read_image(before_sof); }, {"jpeg_dht_before_sof.jpg", "JPEG", "Huffman table"});

  TempDir dir;
  std::vector<uint8_t> grey(8 * 8, 100);
  ASSERT_TRUE(stbi_write_jpg(dir.file("ok.jpg").c_str(), 8, 8, 1, grey.data(), 90));
  EXPECT_EQ(read_image(dir.file("ok.jpg")).sizes().vec(), (std::vector<int64_t>{8, 8, 3}));  // channels default to 3
  // The same file with its first table's 16-bit code count raised to 255:
  // the counts now exceed 256.
  std::ifstream in(dir.file("ok.jpg"), std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t dht = 0;
  for (size_t i = 2; i + 1 < b.size() && !dht; ++i)
    if (b[i] == 0xFF && b[i + 1] == 0xC4) dht = i;
  ASSERT_NE(dht, 0u);
  b[dht + 5 + 15] = 255;
  ember::testing::write_bytes(dir.file("bad.jpg"), b);
  expect_error([&] { (void)read_image(dir.file("bad.jpg")); }, {"bad.jpg", "JPEG", "Huffman table"});
}

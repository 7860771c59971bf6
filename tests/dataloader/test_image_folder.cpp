// ImageFolder: class folders, PNG/JPEG decoding, resize, unreadable images.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

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

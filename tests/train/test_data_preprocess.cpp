// build_data records what evaluation does to an image (DataInfo::image_preprocess,
// which `ember export` writes into the model file), and that record reproduces
// the evaluation samples bit for bit.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include <gtest/gtest.h>

#include <filesystem>

#include "ember/data/data.h"
#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/data_setup.h"

using namespace ember;
using namespace ember::train;
namespace fs = std::filesystem;

namespace {

// A w x h RGB PNG with a gradient seeded by `v`.
void write_png(const fs::path& path, int w, int h, int v) {
  fs::create_directories(path.parent_path());
  std::vector<uint8_t> px;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c)
      for (int ch = 0; ch < 3; ++ch) px.push_back(static_cast<uint8_t>((v + r * 31 + c * 17 + ch * 50) % 256));
  ASSERT_TRUE(stbi_write_png(path.string().c_str(), w, h, 3, px.data(), w * 3));
}

class ImageFolderRun : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("ember_data_preprocess_{}", ::getpid());
    fs::remove_all(root_);
    int v = 0;
    for (const char* split : {"train", "test"})
      for (const char* cls : {"cat", "dog"}) {
        v += 40;
        write_png(root_ / split / cls / "a.png", 6 + v % 3, 5, v);  // 6 to 8 wide: resized to 4 x 4
      }
  }
  void TearDown() override { fs::remove_all(root_); }
  Config config(std::vector<std::string> extra = {}) {
    std::vector<std::string> o = {"model.name=mlp", "data.dataset=image_folder", "data.root=" + root_.string(),
                                  "data.image_size=4", "data.channels=3", "data.val_fraction=0",
                                  "data.num_workers=0"};
    o.insert(o.end(), extra.begin(), extra.end());
    return load_config("", o);
  }
  fs::path root_;
};

TEST_F(ImageFolderRun, RecordsTheEvalPipelineAndItReproducesTheTestSamples) {
  DataBundle d = build_data(config());
  ASSERT_TRUE(d.info.image_preprocess.has_value());
  const data::ImagePreprocess& p = *d.info.image_preprocess;
  EXPECT_EQ(p.channels, 3);
  EXPECT_EQ(p.height, 4);
  EXPECT_EQ(p.width, 4);
  EXPECT_EQ(p.mean, (std::vector<double>{0.5, 0.5, 0.5}));  // image_folder's default
  EXPECT_EQ(p.std, (std::vector<double>{0.5, 0.5, 0.5}));
  ASSERT_EQ(d.test->size(), 2);
  EXPECT_TRUE(equal(p.load((root_ / "test/cat/a.png").string()), d.test->get(0)[0].tensor()));
  EXPECT_TRUE(equal(p.load((root_ / "test/dog/a.png").string()), d.test->get(1)[0].tensor()));
}

TEST_F(ImageFolderRun, ConfiguredNormalisationAndGreyAreRecorded) {
  DataBundle d = build_data(config({"data.mean=[0.1,0.2,0.3]", "data.std=[0.3,0.2,0.1]"}));
  EXPECT_EQ(d.info.image_preprocess->mean, (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_EQ(d.info.image_preprocess->std, (std::vector<double>{0.3, 0.2, 0.1}));
  EXPECT_TRUE(equal(d.info.image_preprocess->load((root_ / "test/dog/a.png").string()), d.test->get(1)[0].tensor()));

  DataBundle g = build_data(config({"data.normalize=false", "data.channels=1", "data.image_size=3"}));
  const data::ImagePreprocess& p = *g.info.image_preprocess;
  EXPECT_EQ(p.channels, 1);
  EXPECT_EQ(p.height, 3);
  EXPECT_TRUE(p.mean.empty());
  EXPECT_TRUE(equal(p.load((root_ / "test/cat/a.png").string()), g.test->get(0)[0].tensor()));
}

TEST(DataPreprocess, FashionMnistRecordsItsStatisticsAndNoImageIsResized) {
  if (!fs::exists(fs::path(data::kDebianFashionMnistRoot) / "t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "no Fashion-MNIST in " << data::kDebianFashionMnistRoot;
  DataBundle d = build_data(load_config("", {"model.name=mlp", "data.limit_test=3", "data.num_workers=0"}));
  ASSERT_TRUE(d.info.image_preprocess.has_value());
  const data::ImagePreprocess& p = *d.info.image_preprocess;
  EXPECT_EQ(p.to_json(), R"({"kind":"image","channels":1,"size":[28,28],"mean":[0.286],"std":[0.353]})");
  // The raw IDX image [28, 28] through the record = the evaluation sample.
  data::FashionMNIST raw(data::kDebianFashionMnistRoot, false);
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(equal(p(raw.get(i)[0].tensor()), d.test->get(i)[0].tensor())) << i;
}

}  // namespace

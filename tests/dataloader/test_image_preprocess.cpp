// ImagePreprocess: the values it produces, that it matches ImageFolder plus
// the evaluation transform bit for bit, and its JSON form with its errors.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>  // the implementation is in test_image_folder.cpp
#pragma GCC diagnostic pop

#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::TempDir;

namespace {

// A w x h RGB PNG whose pixel (r, c) is (r * 40 + c * 10, 200 - r * 30, 17 * c).
void write_png(const std::string& path, int w, int h) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::vector<uint8_t> px;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      px.push_back(static_cast<uint8_t>(r * 40 + c * 10));
      px.push_back(static_cast<uint8_t>(200 - r * 30));
      px.push_back(static_cast<uint8_t>(17 * c));
    }
  ASSERT_TRUE(stbi_write_png(path.c_str(), w, h, 3, px.data(), w * 3));
}

}  // namespace

TEST(DataImagePreprocess, ToTensorThenNormalizeInClosedForm) {
  // A grey [H, W] image (as IDX holds it): 51 / 255 = 0.2, (0.2 - 0.5) / 0.25 = -1.2.
  ImagePreprocess p;
  p.channels = 1;
  p.mean = {0.5}, p.std = {0.25};
  Tensor img = tensor<uint8_t>({51, 255, 0, 102}, {2, 2});
  expect_values(p(img), {1, 2, 2}, {-1.2, 2.0, -2.0, -0.4});
  // Without Normalize: [0, 1]; an RGB image becomes CHW.
  ImagePreprocess rgb;
  expect_values(rgb(tensor<uint8_t>({255, 0, 51}, {1, 1, 3})), {3, 1, 1}, {1.0, 0.0, 0.2});
  // Resized to the recorded size: a solid image stays solid.
  rgb.height = 2, rgb.width = 3;
  Tensor solid = full({5, 4, 3}, Scalar(int64_t{51}), TensorOptions().dtype(kUInt8));
  expect_values(rgb(solid), {3, 2, 3}, std::vector<double>(18, 0.2));
  expect_error([&] { p(tensor<uint8_t>({1, 2, 3}, {1, 1, 3})); }, {"3 channels, the model takes 1"});
  expect_error([&] { p(ones({2, 2})); }, {"expected a uint8 image"});
}

TEST(DataImagePreprocess, MatchesImageFolderAndTheEvalTransformBitForBit) {
  TempDir dir;
  write_png(dir.file("a/x.png"), 7, 5);
  write_png(dir.file("b/y.png"), 3, 4);
  ImagePreprocess p;
  p.channels = 3, p.height = 4, p.width = 6;
  p.mean = {0.4, 0.5, 0.6}, p.std = {0.2, 0.3, 0.25};
  ImageFolderOptions o;
  o.channels = 3, o.resize = {4, 6};
  ImageFolder ds(dir.path().string(), o);
  transforms::Compose eval({std::make_shared<transforms::ToTensor>(),
                            std::make_shared<transforms::Normalize>(p.mean, p.std)});
  ASSERT_EQ(ds.size(), 2);
  for (int64_t i = 0; i < ds.size(); ++i) {
    Tensor want = eval(ds.get(i)[0].tensor());
    Tensor got = p.load(ds.samples()[static_cast<size_t>(i)].first);
    EXPECT_EQ(got.sizes().vec(), (std::vector<int64_t>{3, 4, 6}));
    EXPECT_TRUE(equal(got, want)) << i;
  }
  // Grey: decoded to one channel by read_image's rule, as ImageFolder with channels 1.
  p.channels = 1, p.mean = {0.3}, p.std = {0.2};
  o.channels = 1;
  ImageFolder grey(dir.path().string(), o);
  transforms::Compose eval1({std::make_shared<transforms::ToTensor>(),
                             std::make_shared<transforms::Normalize>(p.mean, p.std)});
  EXPECT_TRUE(equal(p.load(grey.samples()[0].first), eval1(grey.get(0)[0].tensor())));
  expect_error([&] { p.load(dir.file("missing.png")); }, {"missing.png"});
}

TEST(DataImagePreprocess, JsonRoundTripAndErrorsNameTheFile) {
  ImagePreprocess p;
  p.channels = 1, p.height = 28, p.width = 28;
  p.mean = {0.286}, p.std = {0.353};
  EXPECT_EQ(p.to_json(), R"({"kind":"image","channels":1,"size":[28,28],"mean":[0.286],"std":[0.353]})");
  EXPECT_EQ(ImagePreprocess::from_json(p.to_json(), "m.ember"), p);
  ImagePreprocess plain;  // no resize, no Normalize
  EXPECT_EQ(plain.to_json(), R"({"kind":"image","channels":3,"size":[0,0]})");
  EXPECT_EQ(ImagePreprocess::from_json(plain.to_json(), "m.ember"), plain);

  auto fails = [](const std::string& json, const char* problem) {
    expect_error([&] { ImagePreprocess::from_json(json, "m.ember"); }, {"m.ember: input_transform: ", problem});
  };
  fails("not json", "not a JSON object");
  fails(R"({"kind":"audio","channels":1,"size":[2,2]})", R"(kind "audio" is not supported)");
  fails(R"({"channels":1,"size":[2,2]})", "kind missing");
  fails(R"({"kind":"image","channels":5,"size":[2,2]})", "'channels' must be");
  fails(R"({"kind":"image","channels":1,"size":[2]})", "'size' must be [height, width]");
  fails(R"({"kind":"image","channels":1,"size":[0,3]})", "'size' must be");
  fails(R"({"kind":"image","channels":1,"size":[2,2],"mean":[0.5]})", "1 means but 0 stds");
  fails(R"({"kind":"image","channels":3,"size":[2,2],"mean":[1,2],"std":[1,2]})", "2 means for 3 channels");
  fails(R"({"kind":"image","channels":1,"size":[2,2],"mean":[0.5],"std":[0]})", "std 0 is not positive");
  fails(R"({"kind":"image","channels":1,"size":[2,2],"mean":"x","std":[1]})", "'mean' must be a non-empty list");
}

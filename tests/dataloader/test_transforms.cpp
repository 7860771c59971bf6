// Transforms against torchvision 0.14 (values printed by F.rotate, F.center_crop,
// T.ToTensor, T.Normalize, nn.functional.interpolate) or hand-computed crops.
#include <set>

#include "ember/data/data.h"
#include "test_util.h"

using namespace ember;
using namespace ember::data;
using namespace ember::data::transforms;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {
Tensor grid5() { return arange(25).reshape({1, 5, 5}).to(kFloat32); }
std::vector<double> seq(int n, int start = 0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}
}  // namespace

TEST(DataTransforms, ToTensorHwcToChwScaled) {
  // torchvision: T.ToTensor()(np.array([[[0,128,255],[1,2,3]],[[10,20,30],[254,100,50]]], uint8))
  Tensor img = tensor<uint8_t>({0, 128, 255, 1, 2, 3, 10, 20, 30, 254, 100, 50}, {2, 2, 3});
  expect_values(ToTensor()(img), {3, 2, 2},
                {0.0, 0.003921568859368563, 0.03921568766236305, 0.9960784316062927,
                 0.501960813999176, 0.007843137718737125, 0.0784313753247261, 0.3921568691730499,
                 1.0, 0.0117647061124444, 0.11764705926179886, 0.19607843458652496},
                0, 0);  // bit-exact
  EXPECT_EQ(ToTensor()(tensor<uint8_t>({1, 2, 3, 4}, {2, 2})).sizes().vec(),
            (std::vector<int64_t>{1, 2, 2}));
  expect_error([] { (void)ToTensor()(zeros({2, 2})); }, {"ToTensor", "uint8"});
}

TEST(DataTransforms, NormalizePerChannel) {
  // torchvision: T.Normalize((0.5, 0.25), (0.5, 2.0)) on [[[0, 1]], [[0.25, 0.75]]]
  Tensor x = tensor<float>({0, 1, 0.25f, 0.75f}, {2, 1, 2});
  expect_values(Normalize({0.5, 0.25}, {0.5, 2.0})(x), {2, 1, 2}, {-1, 1, 0, 0.25});
  // Fashion-MNIST statistics on 0.5: torchvision gives 0.6062322854995728.
  expect_values(Normalize({0.2860}, {0.3530})(full({1, 1, 1}, 0.5)), {1, 1, 1},
                {0.6062322854995728}, 0, 1e-7);
  expect_error([&] { (void)Normalize({0.1, 0.2, 0.3}, {1, 1, 1})(x); }, {"3 means", "2 channels"});
  expect_error([] { Normalize({0.5}, {0}); }, {"division by zero"});
}

TEST(DataTransforms, CenterCropMatchesTorchvision) {
  expect_values(CenterCrop(2)(grid5()), {1, 2, 2}, {12, 13, 17, 18});
  expect_values(CenterCrop({3, 4})(grid5()), {1, 3, 4}, {5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18});
  // Larger than the image: zero padding, F.center_crop(arange(1, 13).reshape(1, 3, 4), [6, 5]).
  Tensor z = arange(1, 13).reshape({1, 3, 4}).to(kFloat32);
  expect_values(CenterCrop({6, 5})(z), {1, 6, 5},
                {0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 5, 6, 7, 8, 0, 9, 10, 11, 12, 0,
                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(DataTransforms, RandomCropIsThePaddedWindowAtItsParams) {
  RandomCrop rc(3, 1);
  std::set<std::pair<int64_t, int64_t>> offsets;
  for (int64_t index = 0; index < 200; ++index) {
    SampleGenerator g1(7, 0, index), g2(7, 0, index);
    auto [top, left] = rc.get_params(7, 7, g1);  // 5 + 2 * padding
    ASSERT_TRUE(top >= 0 && top <= 4 && left >= 0 && left <= 4);
    offsets.insert({top, left});
    // Hand-computed: padded(r, c) = 5 * (r - 1) + (c - 1) inside, 0 outside.
    std::vector<double> expected;
    for (int64_t r = top; r < top + 3; ++r)
      for (int64_t c = left; c < left + 3; ++c) {
        bool inside = r >= 1 && r <= 5 && c >= 1 && c <= 5;
        expected.push_back(inside ? 5.0 * static_cast<double>(r - 1) + static_cast<double>(c - 1) : 0.0);
      }
    expect_values(rc(grid5(), g2), {1, 3, 3}, expected);
  }
  EXPECT_EQ(offsets.size(), 25u);  // every window position occurs
  // uint8 and several channels crop alike.
  Tensor u = arange(2 * 5 * 5).reshape({2, 5, 5}).to(kUInt8);
  SampleGenerator g(1, 2, 3);
  EXPECT_EQ(RandomCrop(5, 0)(u, g).to_vector<int64_t>(), u.to_vector<int64_t>());
  expect_error([] { (void)RandomCrop(8)(zeros({1, 5, 5})); }, {"larger than", "add padding"});
}

TEST(DataTransforms, RandomHorizontalFlip) {
  Tensor x = arange(6).reshape({1, 2, 3}).to(kFloat32);
  expect_values(RandomHorizontalFlip(1.0)(x), {1, 2, 3}, {2, 1, 0, 5, 4, 3});
  expect_values(RandomHorizontalFlip(0.0)(x), {1, 2, 3}, {0, 1, 2, 3, 4, 5});
  int flipped = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    SampleGenerator g(3, 0, i);
    flipped += RandomHorizontalFlip(0.5)(x, g).to_vector<double>()[0] == 2.0;
  }
  EXPECT_NEAR(flipped, 500, 60);
}

TEST(DataTransforms, RotationMatchesTorchvision) {
  // torchvision F.rotate(torch.arange(25.).reshape(1, 5, 5), angle), nearest.
  expect_values(rotate(grid5(), 90), {1, 5, 5},
                {4, 9, 14, 19, 24, 3, 8, 13, 18, 23, 2, 7, 12, 17, 22, 1, 6, 11, 16, 21, 0, 5, 10, 15, 20});
  expect_values(rotate(grid5(), 30), {1, 5, 5},
                {0, 2, 3, 9, 0, 1, 7, 7, 13, 14, 5, 11, 12, 13, 19, 10, 11, 17, 17, 23, 0, 15, 21, 22, 0});
  expect_values(rotate(grid5(), -17), {1, 5, 5},
                {5, 0, 1, 2, 3, 10, 6, 7, 8, 4, 15, 11, 12, 13, 9, 20, 16, 17, 18, 14, 21, 22, 23, 24, 19});
  // F.rotate(arange(24.).reshape(1, 4, 6), 10) is the identity at this size.
  expect_values(rotate(arange(24).reshape({1, 4, 6}).to(kFloat32), 10), {1, 4, 6}, seq(24));
  // RandomRotation((90, 90)) is the fixed rotation.
  expect_values(RandomRotation(std::pair<double, double>{90.0, 90.0})(grid5()), {1, 5, 5},
                rotate(grid5(), 90).to_vector<double>());
}

TEST(DataTransforms, RandomErasingErasesItsBox) {
  RandomErasing re(1.0, {0.1, 0.3}, {0.5, 2.0}, -1.0);
  Tensor x = ones({2, 10, 10});
  for (int64_t index = 0; index < 50; ++index) {
    SampleGenerator g1(4, 1, index), g2(4, 1, index);
    (void)g1.uniform();  // apply draws its probability first
    auto box = re.get_params(10, 10, g1);
    Tensor y = re(x, g2);
    std::vector<double> expected;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t r = 0; r < 10; ++r)
        for (int64_t k = 0; k < 10; ++k) {
          bool in = r >= box.top && r < box.top + box.height && k >= box.left && k < box.left + box.width;
          expected.push_back(in ? -1.0 : 1.0);
        }
    expect_values(y, {2, 10, 10}, expected);
    if (box.height > 0) {
      double area = static_cast<double>(box.height * box.width);
      EXPECT_GE(area, 100 * 0.1 * 0.5);  // rounding of sqrt(area * ratio) allows some slack
      EXPECT_LE(area, 100 * 0.3 * 1.6);
    }
  }
  EXPECT_EQ(x.to_vector<double>(), ones({2, 10, 10}).to_vector<double>()) << "input unchanged";
  expect_values(RandomErasing(0.0)(x).sum(), {}, {200});
}

TEST(DataTransforms, ResizeMatchesInterpolate) {
  // F.interpolate(arange(16.).reshape(1,1,4,4), (3,3), mode='bilinear', align_corners=False)
  expect_values(Resize({3, 3})(arange(16).reshape({1, 4, 4}).to(kFloat32)), {1, 3, 3},
                {0.8333333730697632, 2.1666667461395264, 3.500000238418579, 6.1666669845581055,
                 7.500000476837158, 8.833333969116211, 11.500000953674316, 12.833333969116211,
                 14.166666984558105}, 1e-6, 1e-5);
  expect_values(Resize({5, 7})(arange(1, 13).reshape({1, 3, 4}).to(kFloat32)), {1, 5, 7},
                {1.0, 1.3571429252624512, 1.9285714626312256, 2.5, 3.0714287757873535,
                 3.642857313156128, 4.0, 2.6000001430511475, 2.9571428298950195,
                 3.528571605682373, 4.100000381469727, 4.67142915725708, 5.242857456207275,
                 5.600000381469727, 5.0, 5.357142925262451, 5.928571701049805, 6.5,
                 7.071429252624512, 7.642857551574707, 8.0, 7.40000057220459, 7.757143020629883,
                 8.328572273254395, 8.90000057220459, 9.471428871154785, 10.042858123779297,
                 10.40000057220459, 9.0, 9.357142448425293, 9.928571701049805, 10.5,
                 11.071429252624512, 11.642857551574707, 12.0}, 1e-6, 1e-5);
}

TEST(DataTransforms, PerSampleSeedingIsReproducible) {
  auto t = std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<ToTensor>(), std::make_shared<RandomCrop>(6, 2),
      std::make_shared<RandomHorizontalFlip>(), std::make_shared<RandomRotation>(10.0),
      std::make_shared<Normalize>(std::vector<double>{0.5}, std::vector<double>{0.25})});
  Tensor img = arange(36).reshape({6, 6}).to(kUInt8);
  auto run = [&](uint64_t seed, int64_t epoch, int64_t index) {
    SampleGenerator g(seed, epoch, index);
    return (*t)(img, g).to_vector<double>();
  };
  EXPECT_EQ(run(1, 0, 5), run(1, 0, 5));
  int differing = 0;
  for (int64_t i = 0; i < 20; ++i) differing += run(1, 0, i) != run(1, 1, i);
  EXPECT_GT(differing, 10) << "a new epoch must give new augmentations";
  // TransformedDataset derives from (seed, epoch, index).
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{img.unsqueeze(0).expand({4, 6, 6}).contiguous(), arange(4)});
  TransformedDataset td(ds, t, 1);
  td.set_epoch(1);
  EXPECT_EQ(td.get(3)[0].tensor().to_vector<double>(), run(1, 1, 3));
  EXPECT_EQ(td.get(3)[1].tensor().item<int64_t>(), 3);
}

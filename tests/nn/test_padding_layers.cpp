// The layers of torch.nn that wrap an OPS.md functional and that Ember
// gained for issue 20: the padding layers, BatchNorm3d, Softmax2d and the
// UpsamplingNearest2d/Bilinear2d names. Reprs and values are PyTorch 1.13's
// on the same inputs (printed by the python lines quoted in each test).
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/nn.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

TEST(PaddingLayers, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::ZeroPad2d(2).repr(), "ZeroPad2d((2, 2, 2, 2))");
  EXPECT_EQ(nn::ZeroPad2d({1, 1, 2, 0}).repr(), "ZeroPad2d((1, 1, 2, 0))");
  EXPECT_EQ(nn::ConstantPad1d(2, 3.5).repr(), "ConstantPad1d(padding=(2, 2), value=3.5)");
  EXPECT_EQ(nn::ConstantPad2d({3, 0, 2, 1}, 3.5).repr(), "ConstantPad2d(padding=(3, 0, 2, 1), value=3.5)");
  EXPECT_EQ(nn::ConstantPad3d(3, 3.5).repr(), "ConstantPad3d(padding=(3, 3, 3, 3, 3, 3), value=3.5)");
  EXPECT_EQ(nn::ReflectionPad1d(2).repr(), "ReflectionPad1d((2, 2))");
  EXPECT_EQ(nn::ReflectionPad2d({1, 1, 2, 0}).repr(), "ReflectionPad2d((1, 1, 2, 0))");
  EXPECT_EQ(nn::ReflectionPad3d(1).repr(), "ReflectionPad3d((1, 1, 1, 1, 1, 1))");
  EXPECT_EQ(nn::ReplicationPad1d({3, 1}).repr(), "ReplicationPad1d((3, 1))");
  EXPECT_EQ(nn::ReplicationPad2d(2).repr(), "ReplicationPad2d((2, 2, 2, 2))");
  EXPECT_EQ(nn::ReplicationPad3d(3).repr(), "ReplicationPad3d((3, 3, 3, 3, 3, 3))");
  EXPECT_TRUE(nn::ZeroPad2d(1).parameters().empty());
  expect_error([] { nn::ReflectionPad2d({1, 2, 3}); },
               {"ReflectionPad2d: expected padding to be an int or 4 ints, got (1, 2, 3)"});
}

TEST(PaddingLayers, ValuesMatchPyTorch) {
  // nn.ReplicationPad2d((1, 0, 0, 2))(torch.arange(24.).view(1, 2, 3, 4))[0, 1]
  Tensor y = nn::ReplicationPad2d({1, 0, 0, 2}).forward(arange(24.0).view({1, 2, 3, 4}));
  expect_values(y.select(0, 0).select(0, 1), {5, 5},
                {12, 12, 13, 14, 15, 16, 16, 17, 18, 19, 20, 20, 21, 22, 23, 20, 20, 21, 22, 23, 20, 20, 21, 22, 23});
  // nn.ConstantPad1d((2, 1), -1.5)(torch.tensor([[1., 2.]]))
  expect_values(nn::ConstantPad1d({2, 1}, -1.5).forward(tensor<float>({1, 2}, {1, 2})), {1, 5},
                {-1.5, -1.5, 1, 2, -1.5});
  // nn.ReflectionPad3d(1)(torch.arange(16.).view(1, 2, 2, 2, 2))[0, 0, 0]
  Tensor r = nn::ReflectionPad3d(1).forward(arange(16.0).view({1, 2, 2, 2, 2}));
  EXPECT_EQ(r.sizes().vec(), (std::vector<int64_t>{1, 2, 4, 4, 4}));
  expect_values(r.select(0, 0).select(0, 0).select(0, 0), {4, 4}, {7, 6, 7, 6, 5, 4, 5, 4, 7, 6, 7, 6, 5, 4, 5, 4});
  // nn.ReflectionPad1d(2)(torch.arange(4.).view(1, 4)): unbatched input
  expect_values(nn::ReflectionPad1d(2).forward(arange(4.0).view({1, 4})), {1, 8}, {2, 1, 0, 1, 2, 3, 2, 1});
  Tensor x = randn({2, 3, 4, 5});
  EXPECT_TRUE(equal(nn::ZeroPad2d({1, 2, 0, 3}).forward(x), pad(x, {1, 2, 0, 3})));
}

TEST(BatchNorm3d, NormalisesPerChannelAndUpdatesTheRunningStats) {
  nn::BatchNorm3d bn(2, 1e-5, 0.5);
  EXPECT_EQ(bn.repr(), "BatchNorm3d(2, eps=1e-05, momentum=0.5, affine=True, track_running_stats=True)");
  EXPECT_EQ(nn::BatchNorm3d(4, 1e-5, std::nullopt, false).repr(),
            "BatchNorm3d(4, eps=1e-05, momentum=None, affine=False, track_running_stats=True)");
  // bn = nn.BatchNorm3d(2, momentum=0.5); bn(torch.arange(16.).view(1, 2, 2, 2, 2))
  Tensor y = bn.forward(arange(16.0).view({1, 2, 2, 2, 2}));
  expect_values(y.select(0, 0).select(0, 0).flatten(), {8},
                {-1.5275237560272217, -1.0910884141921997, -0.654653012752533, -0.2182176411151886,
                 0.21821773052215576, 0.6546530723571777, 1.0910885334014893, 1.5275238752365112},
                1e-6, 1e-6);
  expect_values(bn.running_mean, {2}, {1.75, 5.75});
  expect_values(bn.running_var, {2}, {3.5, 3.5});
  expect_error([&] { bn.forward(zeros({2, 2, 3, 3})); }, {"BatchNorm3d: expected 5D input (got 4D input)"});
}

TEST(Softmax2d, NormalisesOverChannels) {
  nn::Softmax2d m;
  EXPECT_EQ(m.repr(), "Softmax2d()");
  // nn.Softmax2d()(torch.tensor([[[1.]], [[2.]]]))
  expect_values(m.forward(tensor<float>({1, 2}, {2, 1, 1})).flatten(), {2}, {0.2689414322376251, 0.7310585975646973},
                1e-7, 1e-7);
  Tensor x = randn({2, 3, 4, 5});
  EXPECT_TRUE(equal(m.forward(x), softmax(x, 1)));
  expect_error([&] { m.forward(zeros({3, 4})); }, {"Softmax2d: expected a 3D or 4D tensor as input, got shape [3, 4]"});
}

TEST(UpsamplingLayers, OlderNamesAreNearestAndAlignedBilinear) {
  EXPECT_EQ(nn::UpsamplingNearest2d({.scale_factor = {2}}).repr(), "UpsamplingNearest2d(scale_factor=2.0, mode=nearest)");
  EXPECT_EQ(nn::UpsamplingNearest2d({.size = {3, 4}}).repr(), "UpsamplingNearest2d(size=(3, 4), mode=nearest)");
  nn::UpsamplingBilinear2d up({.scale_factor = {2}});
  EXPECT_EQ(up.repr(), "UpsamplingBilinear2d(scale_factor=2.0, mode=bilinear)");
  // nn.UpsamplingBilinear2d(scale_factor=2)(torch.tensor([[[[0., 1.], [2., 3.]]]])): align_corners=True
  expect_values(up.forward(tensor<float>({0, 1, 2, 3}, {1, 1, 2, 2})).flatten(), {16},
                {0, 1.0 / 3, 2.0 / 3, 1, 2.0 / 3, 1, 4.0 / 3, 5.0 / 3, 4.0 / 3, 5.0 / 3, 2, 7.0 / 3, 2, 7.0 / 3, 8.0 / 3, 3},
                1e-6, 1e-6);
  Tensor x = randn({1, 2, 3, 3});
  EXPECT_TRUE(equal(nn::UpsamplingNearest2d({.size = {5, 4}}).forward(x), interpolate(x, {.size = {5, 4}})));
}

// The torch.nn.functional additions as layers and losses (issue 20): PyTorch
// 1.13's reprs (printed by python3-torch), state_dict keys, forwards equal to
// the functionals (whose values op_db checks against PyTorch), the random
// ops' statistics, and error messages.
#include <cmath>

#include "ember/nn/distance.h"
#include "ember/nn/fold.h"
#include "ember/nn/upsampling.h"
#include "ember/ops/attention.h"
#include "ember/ops/distance.h"
#include "ember/ops/dropout.h"
#include "ember/ops/normalization.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;

namespace {

std::vector<std::string> state_keys(nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  EXPECT_TRUE(allclose(a, b, 1e-6, 1e-6));
}

}  // namespace

TEST(FunctionalLayers, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::Conv3d(4, 6, 3).repr(), "Conv3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  EXPECT_EQ(nn::Conv3d(2, 4, {3, 2, 1}, 1, "same", 1, 1, false).repr(),
            "Conv3d(2, 4, kernel_size=(3, 2, 1), stride=(1, 1, 1), padding=same, bias=False)");
  EXPECT_EQ(nn::Conv3d(2, 4, 3, {1, 2, 1}, 1, 2, 2).repr(),
            "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 2, 1), padding=(1, 1, 1), dilation=(2, 2, 2), groups=2)");
  EXPECT_EQ(nn::ConvTranspose1d(4, 3, 3, 2, 1, 1).repr(),
            "ConvTranspose1d(4, 3, kernel_size=(3,), stride=(2,), padding=(1,), output_padding=(1,))");
  EXPECT_EQ(nn::AvgPool1d(3, 2).repr(), "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))");
  EXPECT_EQ(nn::AvgPool3d(2).repr(), "AvgPool3d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(nn::AvgPool3d({2, 3, 2}, 1, 1, false, true, 3).repr(), "AvgPool3d(kernel_size=(2, 3, 2), stride=1, padding=1)");
  EXPECT_EQ(nn::MaxPool3d(3, 2, 1).repr(), "MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)");
  EXPECT_EQ(nn::AdaptiveMaxPool2d({3, 4}).repr(), "AdaptiveMaxPool2d(output_size=(3, 4))");
  EXPECT_EQ(nn::AdaptiveMaxPool1d(4).repr(), "AdaptiveMaxPool1d(output_size=4)");
  EXPECT_EQ(nn::AdaptiveAvgPool1d(4).repr(), "AdaptiveAvgPool1d(output_size=4)");
  EXPECT_EQ(nn::AdaptiveAvgPool3d({2, 3, 4}).repr(), "AdaptiveAvgPool3d(output_size=(2, 3, 4))");
  EXPECT_EQ(nn::InstanceNorm1d(3).repr(),
            "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  EXPECT_EQ(nn::InstanceNorm2d(3, 1e-5, 0.1, true, true).repr(),
            "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(nn::InstanceNorm3d(4, 1e-3, 0.2).repr(),
            "InstanceNorm3d(4, eps=0.001, momentum=0.2, affine=False, track_running_stats=False)");
  EXPECT_EQ(nn::LocalResponseNorm(2).repr(), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  EXPECT_EQ(nn::Upsample({.scale_factor = {2}, .mode = "bilinear"}).repr(), "Upsample(scale_factor=2.0, mode=bilinear)");
  EXPECT_EQ(nn::Upsample({.size = {4, 5}}).repr(), "Upsample(size=(4, 5), mode=nearest)");
  EXPECT_EQ(nn::Upsample({.size = {4}}).repr(), "Upsample(size=4, mode=nearest)");
  EXPECT_EQ(nn::Upsample({.scale_factor = {2, 1.5}, .mode = "bicubic", .align_corners = true}).repr(),
            "Upsample(scale_factor=(2.0, 1.5), mode=bicubic)");
  EXPECT_EQ(nn::PixelShuffle(2).repr(), "PixelShuffle(upscale_factor=2)");
  EXPECT_EQ(nn::PixelUnshuffle(3).repr(), "PixelUnshuffle(downscale_factor=3)");
  EXPECT_EQ(nn::Fold({4, 5}, 2).repr(), "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  EXPECT_EQ(nn::Fold(4, {2, 3}, 1, {1, 0}, 2).repr(),
            "Fold(output_size=4, kernel_size=(2, 3), dilation=1, padding=(1, 0), stride=2)");
  EXPECT_EQ(nn::Unfold(3, 1, 1).repr(), "Unfold(kernel_size=3, dilation=1, padding=1, stride=1)");
  EXPECT_EQ(nn::CosineSimilarity().repr(), "CosineSimilarity()");
  EXPECT_EQ(nn::PairwiseDistance(1).repr(), "PairwiseDistance()");
  EXPECT_EQ(nn::Dropout1d(0.2).repr(), "Dropout1d(p=0.2, inplace=False)");
  EXPECT_EQ(nn::Dropout3d().repr(), "Dropout3d(p=0.5, inplace=False)");
  EXPECT_EQ(nn::AlphaDropout(0.3).repr(), "AlphaDropout(p=0.3, inplace=False)");
  EXPECT_EQ(nn::EmbeddingBag(10, 3).repr(), "EmbeddingBag(10, 3, mode=mean)");
  EXPECT_EQ(nn::EmbeddingBag(10, 3, "sum", false, 2).repr(), "EmbeddingBag(10, 3, mode=sum, padding_idx=2)");
  EXPECT_EQ(nn::CosineEmbeddingLoss().repr(), "CosineEmbeddingLoss()");
  EXPECT_EQ(nn::CTCLoss().repr(), "CTCLoss()");
  EXPECT_EQ(nn::GaussianNLLLoss().repr(), "GaussianNLLLoss()");
  EXPECT_EQ(nn::HingeEmbeddingLoss().repr(), "HingeEmbeddingLoss()");
  EXPECT_EQ(nn::MarginRankingLoss(0.5).repr(), "MarginRankingLoss()");
  EXPECT_EQ(nn::MultiMarginLoss().repr(), "MultiMarginLoss()");
  EXPECT_EQ(nn::MultiLabelMarginLoss().repr(), "MultiLabelMarginLoss()");
  EXPECT_EQ(nn::MultiLabelSoftMarginLoss().repr(), "MultiLabelSoftMarginLoss()");
  EXPECT_EQ(nn::PoissonNLLLoss().repr(), "PoissonNLLLoss()");
  EXPECT_EQ(nn::SoftMarginLoss().repr(), "SoftMarginLoss()");
  EXPECT_EQ(nn::TripletMarginLoss().repr(), "TripletMarginLoss()");
}

TEST(FunctionalLayers, StateDictKeysAndShapes) {
  nn::InstanceNorm2d tracked(3, 1e-5, 0.1, true, true);
  EXPECT_EQ(state_keys(tracked),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  nn::InstanceNorm2d plain(3);
  EXPECT_TRUE(state_keys(plain).empty());
  nn::MultiMarginLoss mm({.weight = ones({3})});
  EXPECT_EQ(state_keys(mm), std::vector<std::string>{"weight"});
  nn::EmbeddingBag bag(10, 3, "sum", false, 2);
  EXPECT_EQ(state_keys(bag), std::vector<std::string>{"weight"});
  EXPECT_EQ(bag.weight.select(0, 2).abs().sum().item<double>(), 0.0);  // the padding row starts at zero
  nn::Conv3d c(4, 6, {3, 2, 1}, 1, 0, 1, 2);
  EXPECT_EQ(c.weight.sizes().vec(), (std::vector<int64_t>{6, 2, 3, 2, 1}));
  nn::ConvTranspose1d t(4, 6, 3, 1, 0, 0, 2);
  EXPECT_EQ(t.weight.sizes().vec(), (std::vector<int64_t>{4, 3, 3}));
}

TEST(FunctionalLayers, ForwardIsTheFunctional) {
  Tensor x = randn({2, 4, 6, 6});
  expect_same(nn::PixelShuffle(2).forward(x), pixel_shuffle(x, 2));
  expect_same(nn::PixelUnshuffle(2).forward(x), pixel_unshuffle(x, 2));
  expect_same(nn::Upsample({.size = {9, 9}, .mode = "bilinear"}).forward(x),
              interpolate(x, {.size = {9, 9}, .mode = "bilinear"}));
  expect_same(nn::Unfold(3, 1, 1).forward(x), unfold(x, {3}, {1}, {1}));
  expect_same(nn::Fold(6, 3, 1, 1).forward(unfold(x, {3}, {1}, {1})), fold(unfold(x, {3}, {1}, {1}), {6}, {3}, {1}, {1}));
  expect_same(nn::LocalResponseNorm(3).forward(x), local_response_norm(x, 3));
  expect_same(nn::AdaptiveMaxPool2d({4, 3}).forward(x), adaptive_max_pool2d(x, {4, 3}));
  Tensor a = randn({5, 7}), b = randn({5, 7});
  expect_same(nn::CosineSimilarity().forward(a, b), cosine_similarity(a, b));
  expect_same(nn::PairwiseDistance(1, 1e-6, true).forward(a, b), pairwise_distance(a, b, 1, 1e-6, true));
  Tensor y = tensor<int64_t>({1, -1, 1, 1, -1}, {5}, TensorOptions(kInt64));
  expect_same(nn::CosineEmbeddingLoss(0.2).forward(a, b, y), nn::functional::cosine_embedding_loss(a, b, y, 0.2));
  expect_same(nn::MarginRankingLoss(0.1)(a.select(1, 0), b.select(1, 0), y.to(kFloat32)),
              nn::functional::margin_ranking_loss(a.select(1, 0), b.select(1, 0), y.to(kFloat32), 0.1));
}

// Unbatched input is a batch of one; running stats move only in training.
TEST(FunctionalLayers, InstanceNormRunningStats) {
  nn::InstanceNorm1d m(2, 1e-5, 0.5, false, true);
  Tensor x = tensor<float>({1, 3, 5, 7, 0, 0, 2, 2}, {1, 2, 4});
  Tensor y = m.forward(x);
  // Channel 0 = {1, 3, 5, 7}: mean 4, biased var 5.
  EXPECT_NEAR(y[0][0][0].item<double>(), -3 / std::sqrt(5 + 1e-5), 1e-5);
  // running = 0.5 * old + 0.5 * batch (unbiased variance 20/3 and 4/3).
  ember::testing::expect_values(m.running_mean, {2}, {2.0, 0.5});
  ember::testing::expect_values(m.running_var, {2}, {0.5 + 0.5 * 20.0 / 3, 0.5 + 0.5 * 4.0 / 3}, 1e-5);
  m.eval();
  Tensor z = m.forward(x.squeeze(0));
  EXPECT_EQ(z.sizes().vec(), (std::vector<int64_t>{2, 4}));
  EXPECT_NEAR(z[0][3].item<double>(), (7 - 2.0) / std::sqrt(0.5 + 10.0 / 3 + 1e-5), 1e-5);
  ember::testing::expect_values(m.running_mean, {2}, {2.0, 0.5});  // unchanged in eval
}

TEST(FunctionalLayers, ChannelDropoutZeroesWholeChannels) {
  Generator gen(7);
  Tensor y = dropout1d(ones({8, 64, 10}), 0.5, true, &gen);
  int64_t dropped = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t c = 0; c < 64; ++c) {
      std::vector<float> v = y[n][c].to_vector<float>();
      for (float e : v) ASSERT_EQ(e, v[0]);  // one draw per channel
      ASSERT_TRUE(v[0] == 0.0f || v[0] == 2.0f);
      dropped += v[0] == 0.0f;
    }
  EXPECT_NEAR(static_cast<double>(dropped) / 512, 0.5, 0.08);
  Tensor z = dropout3d(ones({3, 2, 2, 2}), 0.5, true, &gen);  // unbatched (C, D, H, W)
  for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(amax(z[c]).item<float>(), amin(z[c]).item<float>());
}

// SELU's dropout keeps zero mean and unit variance; dropped elements all take
// one value, alpha' * a with alpha' = -1.7581 (PyTorch's constants).
TEST(FunctionalLayers, AlphaDropoutKeepsMeanAndVariance) {
  Generator gen(3);
  Tensor x = randn({200000}, TensorOptions(kFloat64), &gen);
  double p = 0.2;
  Tensor y = alpha_dropout(x, p, true, &gen);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(y.std().item<double>(), 1.0, 0.02);
  const double alpha = 1.7580993408473766, a = 1 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  double frac = lt(abs(y - (-alpha * a * (1 - p))), 1e-9).to(kFloat64).mean().item<double>();
  EXPECT_NEAR(frac, p, 0.01);
  expect_same(alpha_dropout(x, p, false), x);  // F.alpha_dropout defaults to training=False
}

TEST(FunctionalLayers, AttentionDropoutAndCausal) {
  Tensor q = randn({2, 4, 8}), k = randn({2, 4, 8}), v = randn({2, 4, 3});
  EXPECT_EQ(scaled_dot_product_attention(q, k, v, Tensor(), 1.0).abs().sum().item<double>(), 0.0);
  // Causal: the first query sees only the first key, so it returns v[:, 0].
  Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
  expect_same(out.select(1, 0), v.select(1, 0));
  expect_error([&] { scaled_dot_product_attention(q, k, v, ones({4, 4}, TensorOptions(kBool)), 0.0, true); },
               {"scaled_dot_product_attention", "attn_mask", "is_causal"});
}

// An alignment is impossible when the target needs more frames than the input
// has: the loss is inf, or 0 with zero_infinity.
TEST(FunctionalLayers, CtcImpossibleAlignment) {
  Tensor lp = log_softmax(randn({2, 1, 3}), 2);
  Tensor targets = tensor<int64_t>({1, 1, 2}, {1, 3}, TensorOptions(kInt64));
  Tensor il = tensor<int64_t>({2}, {1}, TensorOptions(kInt64)), tl = tensor<int64_t>({3}, {1}, TensorOptions(kInt64));
  EXPECT_TRUE(std::isinf(nn::functional::ctc_loss(lp, targets, il, tl, {.reduction = "sum"}).item<double>()));
  EXPECT_EQ(nn::functional::ctc_loss(lp, targets, il, tl, {.reduction = "sum", .zero_infinity = true}).item<double>(), 0);
  nn::CTCLoss m({.blank = 0, .reduction = "none"});
  EXPECT_EQ(m(lp, targets, il, tl).sizes().vec(), std::vector<int64_t>{1});
}

TEST(FunctionalLayers, ErrorsNameTheOpAndValues) {
  expect_error([] { pixel_shuffle(zeros({1, 5, 2, 2}), 2); }, {"pixel_shuffle", "input.size(-3)=5", "4"});
  expect_error([] { pixel_unshuffle(zeros({1, 1, 5, 4}), 2); }, {"pixel_unshuffle", "5", "2"});
  expect_error([] { interpolate(zeros({1, 1, 4, 4}), {.size = {8}, .mode = "linear"}); },
               {"interpolate", "4D input", "linear", "3D"});
  expect_error([] { interpolate(zeros({1, 1, 4, 4}), {.size = {8}, .mode = "nearest", .align_corners = true}); },
               {"interpolate", "align_corners"});
  expect_error([] { interpolate(zeros({1, 1, 4, 4}), {}); }, {"interpolate", "size or scale_factor"});
  expect_error([] { avg_pool1d(zeros({1, 1, 4}), {2}, {1}, {2}); }, {"avg_pool1d", "pad", "half"});
  expect_error([] { max_pool3d(zeros({1, 4, 4}), {2}); }, {"max_pool3d", "4D or 5D", "[1, 4, 4]"});
  expect_error([] { conv3d(zeros({1, 3, 4, 4, 4}), zeros({2, 2, 1, 1, 1})); }, {"conv3d", "3 channels"});
  expect_error([] { conv1d(zeros({1, 2, 8}), zeros({2, 2, 3}), std::nullopt, {2}, kSame); },
               {"conv1d", "same", "strided"});
  expect_error([] { fold(zeros({1, 6, 5}), {4}, {2}); }, {"fold", "divisible", "6"});
  expect_error([] { pdist(zeros({2, 3, 4})); }, {"pdist", "2D", "3D"});
  expect_error([] { cdist(zeros({3, 4}), zeros({3, 5})); }, {"cdist", "columns", "4", "5"});
  expect_error([] { rms_norm(zeros({2, 3}), {4}); }, {"rms_norm", "[4]", "[2, 3]"});
  expect_error([] { pad(zeros({1, 2, 3}), {4, 0}, "circular"); }, {"pad", "wrapping", "(4, 0)"});
  expect_error([] { dropout1d(zeros({2, 3, 4, 5}), 0.5); }, {"dropout1d", "2D or 3D", "4D"});
  expect_error([] { nn::functional::multi_margin_loss(zeros({2, 3}), tensor<int64_t>({0, 3}, {2}, TensorOptions(kInt64))); },
               {"multi_margin_loss", "3", "out of bounds"});
  expect_error([] { nn::functional::gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), zeros({3})); },
               {"gaussian_nll_loss", "var", "incorrect size"});
  expect_error([] { embedding_bag(tensor<int64_t>({1, 2}, {2}, TensorOptions(kInt64)), zeros({4, 2}), {.offsets = tensor<int64_t>({1}, {1}, TensorOptions(kInt64))}); },
               {"embedding_bag", "offsets[0]", "0"});
}

// Zero-size batches go through (PyTorch returns empty results too).
TEST(FunctionalLayers, EmptyBatches) {
  EXPECT_EQ(interpolate(zeros({0, 2, 3, 3}), {.scale_factor = {2}, .mode = "bilinear"}).sizes().vec(),
            (std::vector<int64_t>{0, 2, 6, 6}));
  EXPECT_EQ(pixel_shuffle(zeros({0, 4, 2, 2}), 2).sizes().vec(), (std::vector<int64_t>{0, 1, 4, 4}));
  EXPECT_EQ(avg_pool1d(zeros({0, 2, 6}), {2}).sizes().vec(), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(cosine_similarity(zeros({0, 3}), zeros({0, 3})).sizes().vec(), std::vector<int64_t>{0});
  EXPECT_EQ(pdist(zeros({1, 3})).sizes().vec(), std::vector<int64_t>{0});
}

// F.interpolate(..., antialias=True) against torch 1.13:
//   x = torch.arange(24.).reshape(1, 1, 4, 6) ** 1.5 / 10
//   bilinear to (2, 3); bicubic to (3, 2) and its input gradient of
//   (y * arange(6).reshape(1, 1, 3, 2)).sum(); bicubic scale_factor 0.5 with
//   align_corners=True; bicubic upsampling to (6, 9) (first 8 values).
TEST(FunctionalLayers, InterpolateAntialiasMatchesPyTorch) {
  auto input = [] { return (pow(arange(24).to(kFloat32).reshape({1, 1, 4, 6}), 1.5) / 10.0).requires_grad_(); };
  Tensor x = input();
  ember::testing::expect_values(
      interpolate(x, {.size = {2, 3}, .mode = "bilinear", .antialias = true}), {1, 1, 2, 3},
      {1.432714, 2.03322, 2.739869, 5.666141, 6.705463, 7.80118}, 1e-5);
  Tensor y = interpolate(x, {.size = {3, 2}, .mode = "bicubic", .antialias = true});
  ember::testing::expect_values(y, {1, 1, 3, 2}, {0.4193997, 1.163491, 3.274075, 4.661558, 7.644552, 9.450377}, 1e-5);
  (y * arange(6).to(kFloat32).reshape({1, 1, 3, 2})).sum().backward();
  ember::testing::expect_values(
      x.grad(), {1, 1, 4, 6},
      {-0.03648637, -0.02501135, 0.05719558, 0.1705102, 0.2299466, 0.1807,    0.1898045, 0.2989788,
       0.4248442,   0.5483717,   0.5769157,  0.4265655, 0.5513603, 0.8127687, 0.9957219, 1.119249,
       1.090706,    0.7881213,   0.7163741,  1.044843,  1.245923,  1.359237,  1.299801,  0.9335605},
      1e-5, 1e-6);
  NoGradGuard no_grad;
  ember::testing::expect_values(
      interpolate(x, {.scale_factor = {0.5}, .mode = "bicubic", .align_corners = true, .antialias = true}),
      {1, 1, 2, 3}, {2.812208, 3.919422, 4.715587, 7.581603, 9.291277, 10.43989}, 1e-5);
  Tensor up = interpolate(x, {.size = {6, 9}, .mode = "bicubic", .antialias = true});
  ember::testing::expect_values(up.reshape({-1}).narrow(0, 0, 8), {8},
                                {-0.1020471, -0.06824584, 0.007064054, 0.1203858, 0.2580924, 0.4178645, 0.5971004,
                                 0.8228972},
                                1e-5, 1e-6);
  ember::testing::expect_error([&] { (void)interpolate(x, {.size = {2, 3}, .mode = "nearest", .antialias = true}); },
                               {"interpolate", "Anti-alias option is only supported for bilinear and bicubic modes"});
}

// grid_sample(mode='bicubic') against torch 1.13 for every padding mode and
// align_corners: x = torch.arange(20.).reshape(1, 1, 4, 5) ** 1.3 / 7, the grid
// below, loss (y * torch.arange(1., 7.).reshape(1, 1, 3, 2)).sum(); output,
// input gradient and grid gradient.
TEST(FunctionalLayers, GridSampleBicubicMatchesPyTorch) {
  struct Case {
    const char* padding;
    bool align;
    std::vector<double> y, gx, gg;
  };
  const std::vector<Case> cases = {
      {"zeros", false,
       {-3.042851e-08, 4.411248, 1.932541, -0.04195591, 2.387543, 0.1988153},
       {0.04943867, -0.4119873, -0.38525, 1.718027, 2.605629, -0.3131104, 2.629503, 0.6389965, -0.2511207, 2.213754, -0.3131104, 2.41519, 2.395456, 0.3559714, -0.3914251, 0.04943848, -0.4541748, 0.228882, 0.1236587, -0.0419457},
       {-0.2392994, 2.897973e-08, 1.949784, 14.88896, -5.589445, 10.12712, 3.687122, -2.610602, 4.205748, 13.62046, 2.039232, 6.115427}},
      {"zeros", true,
       {0.05672243, 3.785137, 2.338326, 2.819062, 2.433258, 0.5692534},
       {0.7372124, -0.4404884, -0.8074555, 5.630767, 1.357329, -0.2183626, 2.125583, 1.10892, 1.101166, 1.838655, -0.3309524, 1.947316, 3.218691, 0.1321703, -0.5050489, 0.05062502, -0.3412763, -0.1794357, -0.2486848, 2.187841},
       {0.2427768, 0.6976149, 1.607647, 9.256933, 3.967834, 10.96581, -32.87855, -33.52518, 2.812753, 10.25197, 5.471928, 13.02497}},
      {"border", false,
       {-0.1276264, 4.27179, 1.802726, 6.570279, 2.387543, 0.6396209},
       {1.159688, -0.4119873, -0.7289467, 3.889181, 4.002563, -0.42336, 2.629503, 0.6389965, -0.2511207, 2.134232, -0.3131104, 2.41519, 2.395456, 0.3559714, -0.3755064, 0.04943848, -0.4491124, 0.186695, 0.06758907, 4.028641},
       {-5.526122e-08, 0.1215498, 1.900815, 10.00785, 1.845676, 10.92517, -0.6789079, -1.905905e-05, 4.205748, 13.62046, 3.79273, -4.570712}},
      {"border", true,
       {0.1059072, 3.782495, 2.10768, 6.834935, 2.433258, 0.5917751},
       {1.017147, -0.43171, -0.840429, 5.952445, 1.240889, -0.1632544, 2.125583, 1.10892, 1.101166, 1.550193, -0.3365177, 1.947316, 3.218691, 0.1321703, -0.600651, 0.05062502, -0.3411887, -0.1802754, -0.4445885, 4.893477},
       {-0.02937589, 1.168086, 1.606838, 8.630033, 1.887952, 10.3928, 0.1889143, -1.867466, 2.812753, 10.25197, 3.853047, 7.551108}},
      {"reflection", false,
       {-0.1823237, 4.27179, 1.802726, 6.438635, 2.387543, 0.4682185},
       {1.206939, -0.4119872, -0.7896976, 4.273932, 4.326564, -0.4706102, 2.629503, 0.6997468, -0.6336567, 1.781016, -0.3131104, 2.41519, 2.395456, 0.3268504, 0.008614043, 0.04943848, -0.4491124, 0.186695, -0.1926141, 3.960845},
       {-0.21861, 0.694567, 1.900815, 10.00785, 1.845676, 10.92517, -2.490184, -13.28305, 4.205748, 13.62046, 3.671214, -2.856689}},
      {"reflection", true,
       {0.05597309, 3.783444, 2.131387, 5.938303, 2.433258, 0.6849361},
       {0.7372124, -0.001835167, -0.8761143, 5.46173, 1.357329, -0.2768852, 2.162306, 1.085112, 1.076545, 1.624834, -0.3309524, 1.940805, 3.14076, 0.4517412, 1.243708, 0.05062502, -0.3412763, -0.3038504, 0.6103732, 2.187841},
       {-0.2566951, 0.6130204, 1.606917, 8.855228, 2.201147, 11.35418, -2.685346, -13.76969, 2.812753, 10.25197, 4.608767, -2.749099}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} align_corners={}", c.padding, c.align));
    Tensor x = (pow(arange(20).to(kFloat32).reshape({1, 1, 4, 5}), 1.3) / 7.0).requires_grad_();
    Tensor g = tensor<float>({-1.2f, -0.9f, 0.1f, 0.35f, 0.77f, -0.4f, 1.15f, 1.3f, -0.3f, 0.0f, 0.6f, -1.05f})
                   .reshape({1, 3, 2, 2})
                   .requires_grad_();
    Tensor y = grid_sample(x, g, "bicubic", c.padding, c.align);
    (y * arange(1, 7).to(kFloat32).reshape({1, 1, 3, 2})).sum().backward();
    ember::testing::expect_values(y, {1, 1, 3, 2}, c.y, 1e-4, 1e-5);
    ember::testing::expect_values(x.grad(), {1, 1, 4, 5}, c.gx, 1e-4, 1e-5);
    ember::testing::expect_values(g.grad(), {1, 3, 2, 2}, c.gg, 1e-4, 1e-4);
  }
}

// Volumetric grid_sample (5-D input) against torch 1.13: x = torch.arange(60.)
// .reshape(1, 1, 3, 4, 5) ** 1.2 / 9, grid [1, 2, 2, 2, 3] (the values below),
// loss (y * torch.arange(1., 9.).reshape(1, 1, 2, 2, 2)).sum().
TEST(FunctionalLayers, GridSample3dMatchesPyTorch) {
  struct Case {
    const char* mode;
    const char* padding;
    bool align;
    std::vector<double> y, gx, gg;
  };
  const std::vector<Case> cases = {
      {"bilinear", "zeros", false,
       {0.7147799, 6.675588, 2.156087, 1.441334, 0, 3.880305, 8.737283, 7.31262},
       {0, 0, 0, 0, 0, 0.01874998, 0, 0, 0, 0, 0.16875, 0.8625, 0.5175, 0.3599999, 0, 0, 0.5750002, 0.3450001, 1.439999, 0, 0, 0, 0, 0, 0, 0.006249993, 0, 0, 0, 0.21375, 0.05624999, 0, 0, 1.24, 0.8549998, 0, 0, 0.2975, 5.8525, 0, 0, 0, 0, 0.1049999, 0.3149997, 3.780001, 1.26, 0, 0.04499995, 0.3712499, 0.4200002, 0.1400001, 0, 0, 0.9450001, 0, 0, 0.05250004, 0.1575001, 0},
       {7.147801, 0.5345836, 1.796362, 0.9763056, -38.14621, 12.11897, 0.428139, 1.722164, -48.51201, 1.2869, 5.184309, 15.04001, 0, 0, 0, -155.2122, 6.304855, 19.06417, 4.014053, 16.17656, -114.6768, 5.327778, 21.0272, 61.59376}},
      {"bilinear", "border", true,
       {3.942309, 9.000723, 11.11043, 2.527292, 7.754241, 9.25569, 10.07339, 7.212434},
       {0, 0, 0, 0, 0, 0.09999996, 0, 0, 0, 0, 0.4, 1.5675, 1.6935, 0.5039999, 0, 0, 0.3325004, 0.4465004, 0.4559998, 0, 0, 0, 1.8, 0.1999998, 0, 0.548, 0.6720002, 0, 0, 1.0725, 0.5120001, 0.2505001, 0.9045004, 3.018001, 2.827499, 0, 0.01750002, 1.2755, 3.501999, 0, 0, 0, 2.7, 1.02, 0.4800002, 1.792, 2.688, 0, 1.08, 1.2975, 0.448, 0.6720002, 0.01200001, 0.01800001, 1.5225, 0, 0, 0.06800003, 0.102, 0},
       {0, 1.715788, 4.760424, 1.106349, 4.112537, 11.49601, 1.723774, 6.448295, -0, 1.780002, 6.840446, 19.73494, 2.687527, 0, 26.6123, -0, 12.39322, 33.83, 3.936714, 14.87766, 38.26207, 4.235916, 15.9367, 40.45164}},
      {"bilinear", "reflection", false,
       {2.85912, 9.536552, 10.78045, 2.506668, 9.498841, 10.34748, 10.9216, 7.31262},
       {0, 0, 0, 0, 0, 0.07499993, 0, 0, 0, 0, 0.6750001, 1.5, 0.8999999, 0.3599999, 0, 0, 1, 0.6000001, 1.439999, 0, 0, 0, 0.3937497, 0.05624995, 0, 0.02499998, 0, 0.04374992, 0.006249988, 0.5700001, 0.225, 0, 0, 1.24, 2.279999, 0, 0, 0.425, 6.235001, 0, 0, 0, 3.543751, 1.03125, 1.575, 4.724999, 1.575, 0.3937497, 0.2812499, 1.305, 0.5250001, 0.175, 0, 0, 2.52, 0, 0, 0.07500005, 0.2250001, 0},
       {-0, 2.138335, 7.185451, 1.394727, -0, 17.31281, 2.140691, 8.610828, 0, 2.238088, 9.016191, 0, 3.494251, -14.08908, 40.04476, 0, 16.81295, 50.83778, 5.017552, 20.2207, -0, 5.327778, 21.0272, 61.59376}},
  };
  const std::vector<float> grid_values = {-1.1f, 0.2f, -0.5f, 0.3f, 0.9f, 0.1f, 0.7f, -0.6f, 1.2f, -0.25f, 0.45f, -0.95f, 0.05f, -1.3f, 0.6f, 1.05f, 0.15f, 0.35f, -0.7f, -0.2f, 0.8f, 0.4f, 0.65f, -0.15f};
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} {} align_corners={}", c.mode, c.padding, c.align));
    Tensor x = (pow(arange(60).to(kFloat32).reshape({1, 1, 3, 4, 5}), 1.2) / 9.0).requires_grad_();
    Tensor g = tensor<float>(grid_values).reshape({1, 2, 2, 2, 3}).requires_grad_();
    Tensor y = grid_sample(x, g, c.mode, c.padding, c.align);
    (y * arange(1, 9).to(kFloat32).reshape({1, 1, 2, 2, 2})).sum().backward();
    ember::testing::expect_values(y, {1, 1, 2, 2, 2}, c.y, 1e-4, 1e-5);
    ember::testing::expect_values(x.grad(), {1, 1, 3, 4, 5}, c.gx, 1e-4, 1e-5);
    ember::testing::expect_values(g.grad(), {1, 2, 2, 2, 3}, c.gg, 1e-4, 1e-4);
  }
  ember::testing::expect_error([] { (void)grid_sample(zeros({1, 1, 2, 2, 2}), zeros({1, 1, 1, 1, 3}), "bicubic"); },
                               {"grid_sample", "bicubic interpolation only supports 4D input"});
}

// Volumetric nearest sampling rounds half-way pixels away from zero (the
// 2-D kernel rounds them to even). torch 1.13, x = torch.arange(1., 5.)
// .view(1, 1, 1, 1, 4), grid x = [-1, -0.5, 0, 0.5, 1] (y = z = 0):
// F.grid_sample(x, grid, mode='nearest', padding_mode=p, align_corners=a),
// the same in float32 and float64. Random grids with gradients: op_db's
// grid_sample.nearest_3d_* cases.
TEST(FunctionalLayers, GridSample3dNearestRoundsHalfWayLikePyTorch) {
  struct Case {
    const char* padding;
    bool align;
    std::vector<double> y;
  };
  const std::vector<Case> cases = {
      {"zeros", false, {0, 2, 3, 4, 0}},      {"zeros", true, {1, 2, 3, 3, 4}},
      {"border", false, {1, 2, 3, 4, 4}},     {"border", true, {1, 2, 3, 3, 4}},
      {"reflection", false, {1, 2, 3, 4, 4}}, {"reflection", true, {1, 2, 3, 3, 4}},
  };
  for (ScalarType dt : {kFloat32, kFloat64})
    for (const Case& c : cases) {
      SCOPED_TRACE(fmt::format("{} {} align_corners={}", to_string(dt), c.padding, c.align));
      Tensor x = arange(1, 5).to(dt).view({1, 1, 1, 1, 4});
      Tensor g = zeros({1, 1, 1, 5, 3}, dt);
      g.select(4, 0).copy_(tensor<double>({-1, -0.5, 0, 0.5, 1}).to(dt).view({1, 1, 1, 5}));
      ember::testing::expect_values(grid_sample(x, g, "nearest", c.padding, c.align), {1, 1, 1, 1, 5}, c.y, 0, 0);
    }
}

// nn::init: PyTorch's gains, bounds and distributions.
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;
namespace init = ember::nn::init;

TEST(NnInit, GainsEqualPyTorch) {
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), std::stod(ref_meta("gain.tanh")));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.2), std::stod(ref_meta("gain.leaky_relu")));
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::stod(ref_meta("gain.relu")));
  EXPECT_EQ(init::calculate_gain("conv2d"), 1.0);
  expect_error([] { init::calculate_gain("swish"); }, {"calculate_gain", "swish"});
  auto [fi, fo] = init::calculate_fan_in_and_fan_out(zeros({8, 3, 5, 5}));
  EXPECT_EQ(fi, 75);
  EXPECT_EQ(fo, 200);
  expect_error([] { init::calculate_fan_in_and_fan_out(zeros({3})); }, {"fewer than 2 dimensions"});
}

TEST(NnInit, BoundsAndMoments) {
  Generator gen(5);
  Tensor w = zeros({400, 300}, kFloat64);
  init::kaiming_uniform_(w, 0, "fan_in", "relu", &gen);
  double bound = std::sqrt(2.0) * std::sqrt(3.0 / 300);
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_GT(w.abs().max().item<double>(), 0.99 * bound);
  init::kaiming_normal_(w, 0, "fan_out", "relu", &gen);
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 400), 0.002);
  init::xavier_uniform_(w, 2.0, &gen);
  EXPECT_LE(w.abs().max().item<double>(), 2.0 * std::sqrt(6.0 / 700));
  init::xavier_normal_(w, 1.0, &gen);
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 700), 0.001);
  init::trunc_normal_(w, 1.0, 2.0, -1.0, 2.0, &gen);
  EXPECT_GE(w.min().item<double>(), -1.0);
  EXPECT_LE(w.max().item<double>(), 2.0);
  // Mean of N(1, 2) truncated to [-1, 2]: 1 + 2 (phi(-1) - phi(0.5)) / (Phi(0.5) - Phi(-1)).
  EXPECT_NEAR(w.mean().item<double>(), 1 + 2 * (0.24197072451914337 - 0.3520653267642995) / (0.6914624612740131 - 0.15865525393145707), 0.01);
  init::constant_(w, 0.5);
  EXPECT_EQ(w.sum().item<double>(), 0.5 * 120000);
  init::zeros_(w);
  init::ones_(w);
  EXPECT_EQ(w.sum().item<double>(), 120000);
  // Same generator state, same values.
  Generator g1(9), g2(9);
  EXPECT_TRUE(equal(init::normal_(zeros({10}), 0, 1, &g1), init::normal_(zeros({10}), 0, 1, &g2)));
}

TEST(NnInit, OrthogonalIsOrthogonal) {
  for (auto shape : {std::vector<int64_t>{6, 4}, std::vector<int64_t>{3, 8}, std::vector<int64_t>{4, 2, 3}}) {
    Tensor w = zeros(shape, kFloat64);
    init::orthogonal_(w, 1.5);
    Tensor m = w.reshape({shape[0], -1});
    Tensor gram = m.size(0) >= m.size(1) ? matmul(m.t(), m) : matmul(m, m.t());
    EXPECT_TRUE(allclose(gram, eye(gram.size(0), std::nullopt, kFloat64) * 2.25, 1e-10, 1e-10)) << gram;
  }
}

TEST(NnInit, LayerDefaultsFollowPyTorch) {
  nn::Linear lin(50, 20);
  double bound = 1 / std::sqrt(50.0);
  EXPECT_LE(lin.weight.abs().max().item<double>(), bound);
  EXPECT_LE(lin.bias.abs().max().item<double>(), bound);
  EXPECT_GT(lin.weight.abs().max().item<double>(), 0.9 * bound);
  nn::BatchNorm1d bn(4);
  EXPECT_EQ(bn.weight.sum().item<double>(), 4);
  EXPECT_EQ(bn.running_var.sum().item<double>(), 4);
  EXPECT_EQ(bn.num_batches_tracked.dtype(), kInt64);
  nn::Embedding emb(1000, 8);
  EXPECT_NEAR(emb.weight.std().item<double>(), 1.0, 0.05);
}

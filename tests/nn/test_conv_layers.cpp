// Conv1d/Conv2d/ConvTranspose2d and the pooling layers: PyTorch 1.13's repr,
// parameter shapes, state_dict keys and default initialisation bounds;
// forward is the functional op (tested in tests/ops against PyTorch).
#include <cmath>

#include "ember/nn/conv.h"
#include "ember/nn/pooling.h"
#include "ember/ops/nn_functional.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;

namespace {

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [name, t] : m.named_parameters()) out.push_back(name);
  return out;
}

// kaiming_uniform_(a=sqrt(5)) and the bias rule both bound by 1/sqrt(fan_in).
void expect_within(const Tensor& t, double bound) {
  for (double v : t.to_vector<double>()) EXPECT_LE(std::fabs(v), bound + 1e-7);
  EXPECT_GT(t.abs().max().item<double>(), 0.5 * bound);  // actually spread over the range
}

}  // namespace

TEST(ConvLayers, ReprMatchesPyTorch) {
  // Strings printed by torch.nn 1.13 for the same constructor arguments.
  EXPECT_EQ(nn::Conv2d(1, 32, 3, 1, 1).repr(), "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  EXPECT_EQ(nn::Conv2d(64, 64, {3, 1}, 2, 0, 2, 4, false).repr(),
            "Conv2d(64, 64, kernel_size=(3, 1), stride=(2, 2), dilation=(2, 2), groups=4, bias=False)");
  EXPECT_EQ(nn::Conv2d(3, 8, 3, 1, "same").repr(), "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=same)");
  EXPECT_EQ(nn::Conv2d(3, 8, 3, 1, "valid").repr(), "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=valid)");
  EXPECT_EQ(nn::Conv1d(3, 4, 5, 2, 1).repr(), "Conv1d(3, 4, kernel_size=(5,), stride=(2,), padding=(1,))");
  EXPECT_EQ(nn::ConvTranspose2d(16, 8, 4, 2, 1, 1).repr(),
            "ConvTranspose2d(16, 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))");
  EXPECT_EQ(nn::ConvTranspose2d(4, 6, 3, 1, 0, 0, 2).repr(),
            "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(1, 1), groups=2)");
  EXPECT_EQ(nn::MaxPool2d(2).repr(), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(nn::MaxPool2d({3, 2}, nn::ExpandingArray<2>{2, 1}, 1, 1, true).repr(),
            "MaxPool2d(kernel_size=(3, 2), stride=(2, 1), padding=1, dilation=1, ceil_mode=True)");
  EXPECT_EQ(nn::MaxPool1d(3, 2).repr(), "MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(nn::AvgPool2d(2).repr(), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(nn::AvgPool2d(3, 2, 1).repr(), "AvgPool2d(kernel_size=3, stride=2, padding=1)");
  EXPECT_EQ(nn::AdaptiveAvgPool2d(1).repr(), "AdaptiveAvgPool2d(output_size=1)");
  EXPECT_EQ(nn::AdaptiveAvgPool2d({3, 4}).repr(), "AdaptiveAvgPool2d(output_size=(3, 4))");
}

TEST(ConvLayers, ParametersAndInit) {
  nn::Conv2d c(32, 64, 3, 1, 1);
  EXPECT_EQ(keys(c), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(c.weight.sizes().vec(), (std::vector<int64_t>{64, 32, 3, 3}));
  EXPECT_TRUE(c.weight.requires_grad());
  expect_within(c.weight, 1 / std::sqrt(32.0 * 9));
  expect_within(c.bias, 1 / std::sqrt(32.0 * 9));
  nn::Conv2d nob(4, 6, 3, 1, 0, 1, 2, false);
  EXPECT_EQ(keys(nob), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(nob.weight.sizes().vec(), (std::vector<int64_t>{6, 2, 3, 3}));
  nn::Conv1d c1(3, 4, 5);
  EXPECT_EQ(c1.weight.sizes().vec(), (std::vector<int64_t>{4, 3, 5}));
  expect_within(c1.weight, 1 / std::sqrt(15.0));
  // Transposed weights are [in, out / groups, k...]; fan_in is out / groups * k * k, as PyTorch computes it.
  nn::ConvTranspose2d t(4, 6, 3, 1, 0, 0, 2);
  EXPECT_EQ(t.weight.sizes().vec(), (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_EQ(t.state_dict().size(), 2u);
  expect_within(t.bias, 1 / std::sqrt(27.0));
}

TEST(ConvLayers, ForwardIsTheFunctionalOp) {
  Tensor x = randn({2, 3, 9, 8});
  nn::Conv2d c(3, 5, {3, 2}, 2, 1);
  Tensor want = conv2d(x, c.weight, c.bias, {2, 2}, {1, 1});
  EXPECT_TRUE(c(x).eq(want).all().item<bool>());
  nn::Conv2d same(3, 4, 4, 1, "same");
  EXPECT_EQ(same(x).sizes().vec(), (std::vector<int64_t>{2, 4, 9, 8}));
  nn::Conv1d c1(3, 4, 4, 1, "same", 2);
  EXPECT_EQ(c1(randn({2, 3, 11})).sizes().vec(), (std::vector<int64_t>{2, 4, 11}));
  nn::ConvTranspose2d t(3, 2, 3, 2, 1, 1);
  EXPECT_EQ(t(x).sizes().vec(), (std::vector<int64_t>{2, 2, 18, 16}));
  EXPECT_EQ(nn::MaxPool2d(2)(x).sizes().vec(), (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_EQ(nn::MaxPool1d(3, 2)(randn({2, 3, 11})).sizes().vec(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(nn::AvgPool2d(3, 2, 1, true)(x).sizes().vec(), (std::vector<int64_t>{2, 3, 5, 5}));  // torch 1.13: [2, 3, 5, 5]
  EXPECT_EQ(nn::AdaptiveAvgPool2d(1)(x).sizes().vec(), (std::vector<int64_t>{2, 3, 1, 1}));
  auto [v, i] = nn::MaxPool2d(2).forward_with_indices(x);
  EXPECT_EQ(i.dtype(), kInt64);
}

TEST(ConvLayers, Errors) {
  expect_error([] { nn::Conv2d(3, 8, 3, 1, 0, 1, 2); }, {"in_channels must be divisible by groups"});
  expect_error([] { nn::Conv2d(4, 6, 3, 1, 0, 1, 4); }, {"out_channels must be divisible by groups"});
  expect_error([] { nn::Conv2d(3, 8, 3, 2, "same"); }, {"padding='same' is not supported for strided convolutions"});
  expect_error([] { nn::Conv2d(3, 8, 3, 1, "full"); }, {"Invalid padding string 'full'"});
}

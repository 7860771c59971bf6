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

// padding_mode: F.pad with the mode, then a convolution without padding.
// Numbers printed by torch 1.13 for:
//   x = torch.arange(12.).reshape(1, 1, 3, 4).requires_grad_()
//   m = nn.Conv2d(1, 1, 3, padding=1, padding_mode=mode, bias=False)
//   m.weight = arange(9).reshape(1, 1, 3, 3) / 10
//   y = m(x); (y * arange(12).reshape(1, 1, 3, 4)).sum().backward()
//   nn.Conv1d(1, 1, 3, padding='same', dilation=2, padding_mode='circular', bias=False),
//     weight [1, 10, 100], x = arange(6.)                           -> [204, 315, 420, 531, 42, 153]
//   nn.Conv3d(1, 1, 2, padding=1, padding_mode='replicate', bias=False), weight 1, x = arange(8.) 2x2x2
TEST(ConvLayers, PaddingModesMatchPyTorch) {
  struct Case {
    const char* mode;
    std::vector<double> y, grad;
  };
  const std::vector<Case> cases = {
      {"reflect",
       {12.0, 13.8, 17.4, 18.0, 24.000002, 25.799999, 29.4, 30.0, 21.6, 23.4, 27.000002, 27.599998},
       {0.7, 2.3, 6.7, 4.1, 15.5, 35.0, 52.500004, 29.0, 11.7, 25.700001, 35.300003, 19.099998}},
      {"replicate",
       {9.900001, 12.6, 16.200001, 18.299999, 23.1, 25.799999, 29.4, 31.5, 29.1, 31.799999, 35.400002, 37.5},
       {0.7, 2.4, 4.2, 8.300001, 5.7, 10.2, 13.800001, 20.700001, 32.299999, 39.599998, 45.0, 54.699997}},
      {"circular",
       {15.0, 15.0, 18.6, 16.200001, 25.800001, 25.799999, 29.4, 27.0, 15.000001, 15.000001, 18.6, 16.199999},
       {23.400002, 20.999998, 24.6, 24.599998, 12.6, 10.2, 13.800001, 13.8, 23.400002, 21.000002, 24.6, 24.599998}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    nn::Conv2d m(1, 1, 3, 1, 1, 1, 1, false, c.mode);
    {
      NoGradGuard no_grad;
      m.weight.copy_(arange(9).to(kFloat32).reshape({1, 1, 3, 3}) / 10.0);
    }
    Tensor x = arange(12).to(kFloat32).reshape({1, 1, 3, 4}).requires_grad_();
    Tensor y = m(x);
    (y * arange(12).to(kFloat32).reshape({1, 1, 3, 4})).sum().backward();
    ember::testing::expect_values(y, {1, 1, 3, 4}, c.y, 1e-5);
    ember::testing::expect_values(x.grad(), {1, 1, 3, 4}, c.grad, 1e-5);
    EXPECT_EQ(m.repr(), fmt::format("Conv2d(1, 1, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False, "
                                    "padding_mode={})",
                                    c.mode));
  }
  nn::Conv1d c1(1, 1, 3, 1, "same", 2, 1, false, "circular");
  NoGradGuard no_grad;
  c1.weight.copy_(tensor<float>({1, 10, 100}).reshape({1, 1, 3}));
  ember::testing::expect_values(c1(arange(6).to(kFloat32).reshape({1, 1, 6})), {1, 1, 6},
                                {204, 315, 420, 531, 42, 153});
  EXPECT_EQ(c1.reversed_padding_repeated_twice(), (std::vector<int64_t>{2, 2}));
  nn::Conv3d c3(1, 1, 2, 1, 1, 1, 1, false, "replicate");
  c3.weight.fill_(1.0);
  ember::testing::expect_values(c3(arange(8).to(kFloat32).reshape({1, 1, 2, 2, 2})), {1, 1, 3, 3, 3},
                                {0,  4,  8,  8,  12, 16, 16, 20, 24, 16, 20, 24, 24, 28,
                                 32, 32, 36, 40, 32, 36, 40, 40, 44, 48, 48, 52, 56});
  // 'same' with an even kernel: PyTorch puts the odd element on the right ([3, 3, 1, 1] for (3, 4), dilation (1, 2)).
  nn::Conv2d even(1, 1, {3, 4}, 1, "same", {1, 2}, 1, true, "replicate");
  EXPECT_EQ(even.reversed_padding_repeated_twice(), (std::vector<int64_t>{3, 3, 1, 1}));
  EXPECT_EQ(even(randn({2, 1, 5, 9})).sizes().vec(), (std::vector<int64_t>{2, 1, 5, 9}));
}

TEST(ConvLayers, PaddingModeErrors) {
  expect_error([] { nn::Conv2d(1, 1, 3, 1, 0, 1, 1, true, "mirror"); },
               {"Conv2d", "padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular'",
                "got padding_mode='mirror'"});
  expect_error([] { nn::ConvTranspose2d(1, 1, 3, 1, 0, 0, 1, true, 1, "reflect"); },
               {"ConvTranspose2d", "only \"zeros\" padding mode is supported"});
  nn::Conv2d m(1, 1, 3, 1, 1, 1, 1, true, "reflect");
  expect_error([&] { (void)m(randn({1, 1, 2, 2, 2, 2})); }, {"Conv2d", "expected 4-D (batched) or 3-D", "[1, 1, 2, 2, 2, 2]"});
}

// Integer convolutions are exact and wrap on overflow as PyTorch 1.13's CPU
// kernels do. The values are torch's F.conv1d on the same tensors:
//   int32 [2^30, 2^30, 3, -2^31] * [2, 1]  -> [-1073741824, -2147483645, -2147483642]
//   int8  [100, 100, 3, -128] * [2, 1]     -> [44, -53, -122]
//   uint8 [200, 100, 3, 255] * [2, 1] + 7  -> [251, 210, 12]
// and the average pools of int64 truncate toward zero: [-7, -1, 5, -4, 3]
// pooled by 2 is [-4, 0].
TEST(ConvLayers, IntegerConvolutionWrapsLikePyTorch) {
  auto conv = [](const std::vector<int64_t>& x, const std::vector<int64_t>& w, ScalarType dt,
                 std::optional<int64_t> bias = std::nullopt) {
    Tensor b = bias ? tensor<int64_t>({*bias}, {1}).to(dt) : Tensor();
    return conv1d(tensor<int64_t>(x, {1, 1, 4}).to(dt), tensor<int64_t>(w, {1, 1, 2}).to(dt),
                  bias ? std::optional<Tensor>(b) : std::nullopt);
  };
  Tensor y32 = conv({1 << 30, 1 << 30, 3, -(int64_t{1} << 31)}, {2, 1}, kInt32);
  EXPECT_EQ(y32.dtype(), kInt32);
  EXPECT_EQ(y32.to_vector<int64_t>(), (std::vector<int64_t>{-1073741824, -2147483645, -2147483642}));
  EXPECT_EQ(conv({100, 100, 3, -128}, {2, 1}, kInt8).to_vector<int64_t>(), (std::vector<int64_t>{44, -53, -122}));
  Tensor yu8 = conv({200, 100, 3, 255}, {2, 1}, kUInt8, 7);
  EXPECT_EQ(yu8.dtype(), kUInt8);
  EXPECT_EQ(yu8.to_vector<int64_t>(), (std::vector<int64_t>{251, 210, 12}));
  // Without overflow, an integer convolution equals the float64 one exactly.
  Tensor x = randint(-50, 50, {2, 4, 6, 5}), w = randint(-50, 50, {6, 2, 3, 2});
  Tensor y = conv2d(x, w, std::nullopt, {1, 2}, {1, 0}, {1, 1}, 2);
  EXPECT_EQ(y.dtype(), kInt64);
  EXPECT_TRUE(equal(y.to(kFloat64), conv2d(x.to(kFloat64), w.to(kFloat64), std::nullopt, {1, 2}, {1, 0}, {1, 1}, 2)));
  EXPECT_EQ(avg_pool1d(tensor<int64_t>({-7, -1, 5, -4, 3}, {1, 1, 5}), {2}).to_vector<int64_t>(),
            (std::vector<int64_t>{-4, 0}));
  expect_error([] { conv1d(ones({1, 1, 3}, TensorOptions(kBool)), ones({1, 1, 2}, TensorOptions(kBool))); },
               {"conv1d: expected a floating-point or integer input, got bool"});
  expect_error([] { avg_pool1d(ones({1, 1, 4}, TensorOptions(kInt32)), {2}); },
               {"avg_pool1d: expected a floating-point or int64 input, got int32"});
}

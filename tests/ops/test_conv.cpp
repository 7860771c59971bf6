// conv1d / conv2d / conv_transpose2d against PyTorch 1.13 (values and every
// gradient, tests/data/gen_conv.py), PyTorch's error cases, and the oneDNN
// kernels against the reference loops on random geometries.
#include <random>

#include "ember/ops/nn_functional.h"
#include "kernels/nn.h"
#include "ops/nn_expected.h"

using namespace ember;
using namespace ember::testing;
using V = std::vector<Tensor>;

namespace {

class ConvVsTorch : public ::testing::TestWithParam<ScalarType> {};

TEST_P(ConvVsTorch, Conv2d) {
  ScalarType dt = GetParam();
  check_with_grads("conv2d_basic", {{2, 3, 7, 6}, {4, 3, 3, 3}, {4}},
                   [](const V& x) { return conv2d(x[0], x[1], x[2]); }, dt);
  check_with_grads("conv2d_stride_pad_dil", {{2, 3, 9, 8}, {4, 3, 3, 2}, {4}},
                   [](const V& x) { return conv2d(x[0], x[1], x[2], {2, 1}, {1, 2}, {1, 2}); }, dt);
  check_with_grads("conv2d_groups", {{2, 4, 6, 6}, {6, 2, 3, 3}, {6}},
                   [](const V& x) { return conv2d(x[0], x[1], x[2], {1}, {1}, {1}, 2); }, dt);
  check_with_grads("conv2d_depthwise", {{1, 4, 5, 5}, {4, 1, 3, 3}},
                   [](const V& x) { return conv2d(x[0], x[1], std::nullopt, {2}, {1}, {1}, 4); }, dt);
  check_with_grads("conv2d_same_even", {{1, 2, 6, 7}, {3, 2, 4, 2}, {3}},
                   [](const V& x) { return conv2d(x[0], x[1], x[2], {1, 1}, kSame, {1, 2}); }, dt);
  check_with_grads("conv2d_valid", {{1, 2, 5, 5}, {3, 2, 2, 2}},
                   [](const V& x) { return conv2d(x[0], x[1], std::nullopt, {1, 1}, kValid); }, dt);
  check_with_grads("conv2d_no_bias_stride", {{1, 1, 5, 5}, {2, 1, 3, 3}},
                   [](const V& x) { return conv2d(x[0], x[1], std::nullopt, {2, 2}); }, dt);
}

TEST_P(ConvVsTorch, Conv1d) {
  ScalarType dt = GetParam();
  check_with_grads("conv1d_basic", {{2, 3, 10}, {4, 3, 3}, {4}},
                   [](const V& x) { return conv1d(x[0], x[1], x[2], {2}, {1}, {2}); }, dt);
  check_with_grads("conv1d_groups", {{1, 3, 8}, {6, 1, 2}},
                   [](const V& x) { return conv1d(x[0], x[1], std::nullopt, {1}, {0}, {1}, 3); }, dt);
}

TEST_P(ConvVsTorch, ConvTranspose2d) {
  ScalarType dt = GetParam();
  check_with_grads("conv_transpose2d_basic", {{2, 3, 4, 5}, {3, 2, 3, 3}, {2}},
                   [](const V& x) { return conv_transpose2d(x[0], x[1], x[2], {2}, {1}, {1}); }, dt);
  check_with_grads("conv_transpose2d_groups_dil", {{1, 4, 3, 3}, {4, 3, 2, 3}}, [](const V& x) {
    return conv_transpose2d(x[0], x[1], std::nullopt, {1, 2}, {0, 1}, {0, 1}, 2, {2, 2});
  }, dt);
  check_with_grads("conv_transpose2d_plain", {{1, 2, 3, 3}, {2, 3, 2, 2}},
                   [](const V& x) { return conv_transpose2d(x[0], x[1]); }, dt);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ConvVsTorch, ::testing::Values(kFloat64, kFloat32),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Conv, NonContiguousInputs) {
  Tensor x = X({2, 3, 6, 7}, 0, kFloat32).transpose(2, 3);  // [2, 3, 7, 6], strided
  Tensor w = X({4, 3, 3, 3}, 1, kFloat32);
  Tensor expected = conv2d(x.contiguous(), w);
  expect_values(conv2d(x, w.transpose(2, 3).contiguous().transpose(2, 3)), expected.sizes(),
                expected.to_vector<double>());
}

TEST(Conv, BFloat16ComputesInFloat32) {
  Tensor x = X({1, 2, 5, 5}, 0, kFloat32), w = X({3, 2, 3, 3}, 1, kFloat32);
  Tensor out = conv2d(x.to(kBFloat16), w.to(kBFloat16), std::nullopt, {1}, {1});
  EXPECT_EQ(out.dtype(), kBFloat16);
  Tensor ref = conv2d(x, w, std::nullopt, {1}, {1});
  expect_values(out, ref.sizes(), ref.to_vector<double>(), 1e-2, 1e-2);
}

TEST(Conv, EmptyBatch) {
  Tensor out = conv2d(zeros({0, 3, 8, 8}), zeros({4, 3, 3, 3}));
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{0, 4, 6, 6}));
}

TEST(Conv, Errors) {
  Tensor x = zeros({2, 3, 8, 8}), w = zeros({4, 3, 3, 3});
  expect_error([] { conv2d(zeros({3, 28, 28}), zeros({4, 3, 3, 3})); },
               {"conv2d: expected 4-D input (N, C, H, W), got [3, 28, 28]; add a batch dimension with unsqueeze(0)"});
  expect_error([&] { conv2d(zeros({2, 5, 8, 8}), w); },
               {"given groups=1, weight of size [4, 3, 3, 3], expected input[2, 5, 8, 8] to have 3 channels, but "
                "got 5 channels instead"});
  expect_error([] { conv2d(zeros({2, 3, 8, 8}), zeros({4, 1, 3, 3}), std::nullopt, {1}, IntArrayRef({0, 0}), {1}, 2); },
               {"expected input[2, 3, 8, 8] to have 2 channels, but got 3 channels"});
  expect_error([] { conv2d(zeros({2, 4, 8, 8}), zeros({3, 2, 3, 3}), std::nullopt, {1}, IntArrayRef({0, 0}), {1}, 2); },
               {"expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3]"});
  expect_error([&] { conv2d(x, zeros({4, 3, 3})); }, {"conv2d: expected 4-D weight", "[4, 3, 3]"});
  expect_error([&] { conv2d(x, w, zeros({5})); },
               {"expected bias to be 1-dimensional with 4 elements, but got bias of size [5] instead"});
  expect_error([&] { conv2d(x, w, std::nullopt, {0}); }, {"non-positive stride is not supported"});
  expect_error([&] { conv2d(x, w, std::nullopt, {1}, {-1}); }, {"negative padding is not supported"});
  expect_error([&] { conv2d(x, w, std::nullopt, {1}, IntArrayRef({0, 0}), {0}); }, {"non-positive dilation is not supported"});
  expect_error([&] { conv2d(x, w, std::nullopt, {1}, IntArrayRef({0, 0}), {1}, 0); }, {"non-positive groups is not supported"});
  expect_error([&] { conv2d(x, w, std::nullopt, {1, 1, 1}); },
               {"expected stride to be a single integer value or a list of 2 values", "stride=[1, 1, 1]"});
  expect_error([&] { conv2d(zeros({1, 3, 2, 2}), w); },
               {"padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than "
                "actual input size"});
  expect_error([&] { conv2d(x, w, std::nullopt, {2, 2}, kSame); },
               {"padding='same' is not supported for strided convolutions"});
  expect_error([&] { conv2d(x, w, std::nullopt, {1, 1}, PaddingMode("foo")); }, {"invalid padding string: 'foo'"});
  expect_error([&] { conv2d(x.to(kFloat64), w); }, {"same dtype", "float64", "float32"});
  expect_error([] { conv2d(zeros({1, 1, 4, 4}, kBool), zeros({1, 1, 1, 1}, kBool)); },
               {"conv2d: expected a floating-point or integer input, got bool"});
  expect_error([] { conv1d(zeros({3, 10}), zeros({4, 3, 3})); },
               {"conv1d: expected 3-D input (N, C, L), got [3, 10]; add a batch dimension with unsqueeze(0)"});
  expect_error([] { conv1d(zeros({1, 2, 10}), zeros({4, 3, 3})); },
               {"weight of size [4, 3, 3], expected input[1, 2, 10] to have 3 channels, but got 2 channels"});
  expect_error([] { conv_transpose2d(zeros({1, 5, 8, 8}), zeros({3, 4, 3, 3})); },
               {"given transposed=1, weight of size [3, 4, 3, 3], expected input[1, 5, 8, 8] to have 3 channels, "
                "but got 5 channels instead"});
  expect_error([] { conv_transpose2d(zeros({1, 3, 8, 8}), zeros({3, 4, 3, 3}), std::nullopt, {2}, {0}, {2}); },
               {"output padding must be smaller than either stride or dilation"});
  expect_error([] { conv_transpose2d(zeros({3, 8, 8}), zeros({3, 4, 3, 3})); },
               {"conv_transpose2d: expected 4-D input (N, C, H, W), got [3, 8, 8]"});
}

// ---- oneDNN vs the reference loops ----

ConvParams random_geometry(std::mt19937& rng) {
  auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvParams p;
  p.groups = r(1, 3);
  p.n = r(1, 3);
  p.c_in = p.groups * r(1, 5);
  p.c_out = p.groups * r(1, 5);
  p.kh = r(1, 4);
  p.kw = r(1, 4);
  p.sh = r(1, 3);
  p.sw = r(1, 3);
  p.dh = r(1, 2);
  p.dw = r(1, 2);
  p.pt = r(0, 2);
  p.pb = r(0, 2);
  p.pl = r(0, 2);
  p.pr = r(0, 2);
  p.ih = r(p.dh * (p.kh - 1) + 1, 12);
  p.iw = r(p.dw * (p.kw - 1) + 1, 12);
  p.oh = (p.ih + p.pt + p.pb - p.dh * (p.kh - 1) - 1) / p.sh + 1;
  p.ow = (p.iw + p.pl + p.pr - p.dw * (p.kw - 1) - 1) / p.sw + 1;
  return p;
}

void expect_close(const Tensor& a, const Tensor& b, const std::string& what) {
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-4 + 1e-4 * std::fabs(y[i])) << what << " at " << i;
}

TEST(ConvKernels, DnnlMatchesReference) {
  std::mt19937 rng(7);
  Generator gen(3);
  for (int trial = 0; trial < 60; ++trial) {
    ConvParams p = random_geometry(rng);
    SCOPED_TRACE(fmt::format("trial {}: n={} c_in={} c_out={} g={} in={}x{} k={}x{} s={}x{} d={}x{} pad={},{},{},{}",
                             trial, p.n, p.c_in, p.c_out, p.groups, p.ih, p.iw, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw,
                             p.pt, p.pb, p.pl, p.pr));
    Tensor x = randn({p.n, p.c_in, p.ih, p.iw}, kFloat32, &gen);
    Tensor w = randn({p.c_out, p.c_in / p.groups, p.kh, p.kw}, kFloat32, &gen);
    Tensor b = randn({p.c_out}, kFloat32, &gen);
    Tensor g = randn({p.n, p.c_out, p.oh, p.ow}, kFloat32, &gen);
    Tensor out = empty({p.n, p.c_out, p.oh, p.ow}), ref = empty_like(out);
    get_kernel<Conv2dKernel>(Op::conv2d, kCPU)(p, x.data_ptr(), w.data_ptr(), b.data_ptr(), out.data_ptr());
    conv2d_ref(p, x.data_ptr(), w.data_ptr(), b.data_ptr(), ref.data_ptr());
    expect_close(out, ref, "forward");
    Tensor gx = empty_like(x), gx_ref = empty_like(x);
    get_kernel<Conv2dBackwardInputKernel>(Op::conv2d_backward_input, kCPU)(p, g.data_ptr(), w.data_ptr(),
                                                                           gx.data_ptr());
    conv2d_backward_input_ref(p, g.data_ptr(), w.data_ptr(), gx_ref.data_ptr());
    expect_close(gx, gx_ref, "backward input");
    Tensor gw = empty_like(w), gw_ref = empty_like(w), gb = empty_like(b), gb_ref = empty_like(b);
    get_kernel<Conv2dBackwardWeightKernel>(Op::conv2d_backward_weight, kCPU)(p, x.data_ptr(), g.data_ptr(),
                                                                             gw.data_ptr(), gb.data_ptr());
    conv2d_backward_weight_ref(p, x.data_ptr(), g.data_ptr(), gw_ref.data_ptr(), gb_ref.data_ptr());
    expect_close(gw, gw_ref, "backward weight");
    expect_close(gb, gb_ref, "backward bias");
  }
}

// Few input channels at stride 1 take conv_small_cin.cpp's Highway kernels
// (forward and weight gradient); each geometry here must take that path and
// match the reference loops, odd widths, asymmetric padding, 1x1 and 12 taps
// included.
TEST(ConvKernels, SmallInputChannelsMatchReference) {
  std::mt19937 rng(11);
  Generator gen(4);
  auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<ConvParams> cases;
  for (int trial = 0; trial < 40; ++trial) {
    ConvParams p;
    p.n = r(1, 5);
    p.c_in = r(1, 3);
    p.kh = r(1, 3);
    p.kw = r(1, std::max<int64_t>(1, std::min<int64_t>(4, 12 / (p.c_in * p.kh))));
    p.c_out = r(1, 9);
    p.pt = r(0, 2);
    p.pb = r(0, 2);
    p.pl = r(0, 2);
    p.pr = r(0, 2);
    p.ih = r(p.kh, 19);
    p.iw = r(p.kw, 37);
    cases.push_back(p);
  }
  ConvParams w1;  // W1's first layer, at a smaller batch
  w1.n = 6, w1.c_in = 1, w1.c_out = 32, w1.kh = w1.kw = 3, w1.pt = w1.pb = w1.pl = w1.pr = 1, w1.ih = w1.iw = 28;
  cases.push_back(w1);
  for (size_t trial = 0; trial < cases.size(); ++trial) {
    ConvParams p = cases[trial];
    p.oh = p.ih + p.pt + p.pb - p.kh + 1;
    p.ow = p.iw + p.pl + p.pr - p.kw + 1;
    SCOPED_TRACE(fmt::format("trial {}: n={} c_in={} c_out={} in={}x{} k={}x{} pad={},{},{},{}", trial, p.n, p.c_in,
                             p.c_out, p.ih, p.iw, p.kh, p.kw, p.pt, p.pb, p.pl, p.pr));
    ASSERT_TRUE(conv2d_small_cin_applies(p));
    Tensor x = randn({p.n, p.c_in, p.ih, p.iw}, kFloat32, &gen);
    Tensor w = randn({p.c_out, p.c_in, p.kh, p.kw}, kFloat32, &gen);
    Tensor b = randn({p.c_out}, kFloat32, &gen);
    Tensor g = randn({p.n, p.c_out, p.oh, p.ow}, kFloat32, &gen);
    // The references run in float64: the weight gradient sums up to 10^4
    // products, beyond what a float32 reference sums exactly enough.
    ConvParams p64 = p;
    p64.dtype = kFloat64;
    Tensor x64 = x.to(kFloat64), w64 = w.to(kFloat64), b64 = b.to(kFloat64), g64 = g.to(kFloat64);
    Tensor out = full({p.n, p.c_out, p.oh, p.ow}, 7.0f), ref = empty_like(out, kFloat64);
    get_kernel<Conv2dKernel>(Op::conv2d, kCPU)(p, x.data_ptr(), w.data_ptr(), b.data_ptr(), out.data_ptr());
    conv2d_ref(p64, x64.data_ptr(), w64.data_ptr(), b64.data_ptr(), ref.data_ptr());
    expect_close(out, ref.to(kFloat32), "forward");
    Tensor gw = full_like(w, 7.0f), gw_ref = empty_like(w64), gb = full_like(b, 7.0f), gb_ref = empty_like(b64);
    get_kernel<Conv2dBackwardWeightKernel>(Op::conv2d_backward_weight, kCPU)(p, x.data_ptr(), g.data_ptr(),
                                                                             gw.data_ptr(), gb.data_ptr());
    conv2d_backward_weight_ref(p64, x64.data_ptr(), g64.data_ptr(), gw_ref.data_ptr(), gb_ref.data_ptr());
    expect_close(gw, gw_ref.to(kFloat32), "backward weight");
    expect_close(gb, gb_ref.to(kFloat32), "backward bias");
    Tensor gw2 = full_like(w, 7.0f);  // without a bias gradient
    get_kernel<Conv2dBackwardWeightKernel>(Op::conv2d_backward_weight, kCPU)(p, x.data_ptr(), g.data_ptr(),
                                                                             gw2.data_ptr(), nullptr);
    expect_close(gw2, gw_ref.to(kFloat32), "backward weight, no bias");
  }
  ConvParams strided = w1;
  strided.sh = strided.sw = 2;
  EXPECT_FALSE(conv2d_small_cin_applies(strided));
  ConvParams wide = w1;
  wide.c_in = 2, wide.kh = wide.kw = 3;  // 18 taps
  EXPECT_FALSE(conv2d_small_cin_applies(wide));
}

TEST(ConvKernels, W6GeometryMatchesReference) {
  Generator gen(5);
  Tensor x = randn({2, 64, 16, 16}, kFloat32, &gen), w = randn({64, 64, 3, 3}, kFloat32, &gen) * 0.1;
  Tensor b = randn({64}, kFloat32, &gen);
  Tensor out = conv2d(x, w, b, {1}, {1});
  Tensor ref = conv2d(x.to(kFloat64), w.to(kFloat64), b.to(kFloat64), {1}, {1});
  expect_close(out, ref, "forward");
}

}  // namespace

TEST(Conv2d, BracedPaddingIsNotAString) {
  // {0, 0} once matched a string_view overload ("same"/"valid") ambiguously.
  Tensor x = ones({1, 1, 3, 3}), w = ones({1, 1, 2, 2});
  EXPECT_EQ(conv2d(x, w, std::nullopt, {1, 1}, {0, 0}).sizes().vec(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(conv2d(x, w, std::nullopt, {1, 1}, kSame).sizes().vec(), (std::vector<int64_t>{1, 1, 3, 3}));
}

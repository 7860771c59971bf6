// max_pool1d/2d, avg_pool2d, adaptive_avg_pool2d against PyTorch 1.13
// (values, indices and input gradients, tests/data/gen_conv.py), PyTorch's
// error cases, and the oneDNN avg-pool backward and the vectorized max pool
// (pool_vec.cpp) against the reference loops.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ember/ops/nn_functional.h"
#include "kernels/nn.h"
#include "ops/nn_expected.h"

using namespace ember;
using namespace ember::testing;
using V = std::vector<Tensor>;

namespace {

class PoolVsTorch : public ::testing::TestWithParam<ScalarType> {};

TEST_P(PoolVsTorch, MaxPool2d) {
  ScalarType dt = GetParam();
  check_with_grads("max_pool2d_k3s2p1", {{2, 3, 7, 7}}, [](const V& x) { return max_pool2d(x[0], {3}, {2}, {1}); },
                   dt);
  check_with_grads("max_pool2d_k2", {{1, 2, 6, 5}}, [](const V& x) { return max_pool2d(x[0], {2}); }, dt);
  check_with_grads("max_pool2d_ceil", {{1, 2, 6, 6}},
                   [](const V& x) { return max_pool2d(x[0], {3}, {2}, {0}, {1}, true); }, dt);
  check_with_grads("max_pool2d_dilation", {{1, 2, 7, 8}},
                   [](const V& x) { return max_pool2d(x[0], {2, 3}, {1, 2}, {1, 1}, {2}); }, dt);
  check_with_grads("max_pool2d_3d", {{2, 5, 5}}, [](const V& x) { return max_pool2d(x[0], {2}); }, dt);
}

TEST_P(PoolVsTorch, MaxPool2dNoGradPath) {
  // Without grad no indices are computed.
  ScalarType dt = GetParam();
  expect_torch("max_pool2d_k3s2p1", max_pool2d(X({2, 3, 7, 7}, 0, dt), {3}, {2}, {1}));
  expect_torch("max_pool2d_ceil", max_pool2d(X({1, 2, 6, 6}, 0, dt), {3}, {2}, {0}, {1}, true));
  expect_torch("max_pool2d_dilation", max_pool2d(X({1, 2, 7, 8}, 0, dt), {2, 3}, {1, 2}, {1, 1}, {2}));
}

TEST_P(PoolVsTorch, MaxPool2dIndices) {
  ScalarType dt = GetParam();
  auto [v, i] = max_pool2d_with_indices(X({2, 3, 7, 7}, 0, dt), {3}, {2}, {1});
  expect_torch("max_pool2d_k3s2p1", v);
  EXPECT_EQ(i.dtype(), kInt64);
  expect_torch("max_pool2d_k3s2p1.indices", i);
  expect_torch("max_pool2d_ceil.indices",
               max_pool2d_with_indices(X({1, 2, 6, 6}, 0, dt), {3}, {2}, {0}, {1}, true).second);
}

TEST_P(PoolVsTorch, MaxPool1d) {
  ScalarType dt = GetParam();
  check_with_grads("max_pool1d_k3s2p1", {{2, 3, 11}}, [](const V& x) { return max_pool1d(x[0], {3}, {2}, {1}); },
                   dt);
  check_with_grads("max_pool1d_ceil_dil", {{1, 2, 10}},
                   [](const V& x) { return max_pool1d(x[0], {2}, {3}, {0}, {2}, true); }, dt);
  check_with_grads("max_pool1d_2d", {{3, 6}}, [](const V& x) { return max_pool1d(x[0], {2}); }, dt);
}

TEST_P(PoolVsTorch, AvgPool2d) {
  ScalarType dt = GetParam();
  check_with_grads("avg_pool2d_k3s2p1", {{2, 3, 7, 7}}, [](const V& x) { return avg_pool2d(x[0], {3}, {2}, {1}); },
                   dt);
  check_with_grads("avg_pool2d_exclude_pad", {{2, 3, 7, 7}},
                   [](const V& x) { return avg_pool2d(x[0], {3}, {2}, {1}, false, false); }, dt);
  check_with_grads("avg_pool2d_ceil", {{1, 2, 6, 6}},
                   [](const V& x) { return avg_pool2d(x[0], {3}, {2}, {1}, true); }, dt);
  check_with_grads("avg_pool2d_ceil_exclude", {{1, 2, 6, 6}},
                   [](const V& x) { return avg_pool2d(x[0], {3}, {2}, {1}, true, false); }, dt);
  check_with_grads("avg_pool2d_ceil_nopad", {{1, 2, 5, 7}},
                   [](const V& x) { return avg_pool2d(x[0], {2}, {}, {0}, true); }, dt);
  check_with_grads("avg_pool2d_rect", {{1, 2, 5, 7}},
                   [](const V& x) { return avg_pool2d(x[0], {2, 3}, {1, 2}, {1, 0}); }, dt);
  check_with_grads("avg_pool2d_3d", {{2, 4, 4}}, [](const V& x) { return avg_pool2d(x[0], {2}); }, dt);
}

TEST_P(PoolVsTorch, AdaptiveAvgPool2d) {
  ScalarType dt = GetParam();
  check_with_grads("adaptive_avg_pool2d_uneven", {{1, 2, 7, 9}},
                   [](const V& x) { return adaptive_avg_pool2d(x[0], {3, 4}); }, dt);
  check_with_grads("adaptive_avg_pool2d_even", {{2, 2, 6, 6}},
                   [](const V& x) { return adaptive_avg_pool2d(x[0], {2, 3}); }, dt);
  check_with_grads("adaptive_avg_pool2d_global", {{2, 3, 5, 4}},
                   [](const V& x) { return adaptive_avg_pool2d(x[0], {1}); }, dt);
  check_with_grads("adaptive_avg_pool2d_upsample", {{1, 1, 3, 2}},
                   [](const V& x) { return adaptive_avg_pool2d(x[0], {5, 3}); }, dt);
  check_with_grads("adaptive_avg_pool2d_3d", {{3, 5, 5}},
                   [](const V& x) { return adaptive_avg_pool2d(x[0], {2, 2}); }, dt);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PoolVsTorch, ::testing::Values(kFloat64, kFloat32),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Pool, NonContiguousInput) {
  Tensor x = X({1, 2, 6, 7}, 0, kFloat32).transpose(2, 3);
  Tensor expected = max_pool2d(x.contiguous(), {2});
  expect_values(max_pool2d(x, {2}), expected.sizes(), expected.to_vector<double>());
}

TEST(Pool, Errors) {
  expect_error([] { max_pool2d(zeros({8, 8}), {2}); },
               {"max_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got [8, 8]"});
  expect_error([] { max_pool2d(zeros({1, 1, 8, 8}), {2}, {}, {2}); },
               {"pad should be at most half of kernel size, but got pad=2 and kernel_size=2"});
  expect_error([] { max_pool2d(zeros({1, 1, 2, 2}), {3}); },
               {"given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"});
  expect_error([] { max_pool2d(zeros({1, 1, 4, 4}), {0}); }, {"kernel size should be greater than zero"});
  expect_error([] { max_pool2d(zeros({1, 1, 4, 4}), {2}, {0}); }, {"stride should be greater than zero"});
  expect_error([] { max_pool2d(zeros({1, 1, 4, 4}), {2}, {}, {0}, {0}); },
               {"dilation should be greater than zero, but got dilationH: 0 dilationW: 0"});
  expect_error([] { max_pool2d(zeros({1, 1, 4, 4}), {2, 2, 2}); },
               {"kernel_size must either be a single int, or a tuple of two ints"});
  expect_error([] { max_pool2d(zeros({1, 1, 4, 4}, kInt64), {2}); }, {"expected a floating-point input, got int64"});
  expect_error([] { max_pool2d(zeros({1, 0, 4, 4}), {2}); }, {"non-zero size for non-batch dimensions"});
  expect_error([] { max_pool2d_with_indices(zeros({4, 4}), {2}); }, {"max_pool2d: expected a 3-D"});
  expect_error([] { avg_pool2d(zeros({1, 1, 8, 8}), {2}, {}, {2}); },
               {"avg_pool2d: pad should be at most half of kernel size, but got pad=2 and kernel_size=2"});
  expect_error([] { avg_pool2d(zeros({1, 1, 2, 2}), {3}); }, {"Output size is too small"});
  expect_error([] { avg_pool2d(zeros({8, 8}), {2}); }, {"avg_pool2d: expected a 3-D (C, H, W) or 4-D"});
  expect_error([] { max_pool1d(zeros({8}), {2}); }, {"max_pool1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got [8]"});
  expect_error([] { max_pool1d(zeros({1, 1, 2}), {3}); }, {"max_pool1d: invalid computed output size"});
  expect_error([] { max_pool1d(zeros({1, 1, 8}), {2}, {}, {2}); }, {"padding should be at most half of kernel size"});
  expect_error([] { adaptive_avg_pool2d(zeros({8, 8}), {2}); },
               {"adaptive_avg_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got [8, 8]"});
  expect_error([] { adaptive_avg_pool2d(zeros({1, 1, 8, 8}), {1, 2, 3}); }, {"output_size must be"});
  expect_error([] { adaptive_avg_pool2d(zeros({1, 1, 8, 8}), {-1, 2}); }, {"greater than or equal to 0"});
}

TEST(Pool, AdaptiveZeroOutput) {
  EXPECT_EQ(adaptive_avg_pool2d(zeros({1, 1, 8, 8}), {0, 2}).sizes().vec(), (std::vector<int64_t>{1, 1, 0, 2}));
}

// ---- oneDNN (avg backward, the one pooling kernel it serves) vs the reference loop ----

void expect_close(const Tensor& a, const Tensor& b, const std::string& what) {
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-5 + 1e-5 * std::fabs(y[i])) << what << " at " << i;
}

TEST(PoolKernels, DnnlMatchesReference) {
  std::mt19937 rng(11);
  Generator gen(4);
  auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 80; ++trial) {
    PoolParams p;
    p.n = r(1, 3);
    p.c = r(1, 4);
    p.kh = r(1, 4);
    p.kw = r(1, 4);
    p.sh = r(1, 3);
    p.sw = r(1, 3);
    p.pt = r(0, p.kh / 2);
    p.pl = r(0, p.kw / 2);
    p.ih = r(p.dh * (p.kh - 1) + 1, 12);
    p.iw = r(p.dw * (p.kw - 1) + 1, 12);
    p.count_include_pad = r(0, 1);
    bool ceil = r(0, 1);
    // PyTorch's output size, as pool.cpp computes it.
    auto out_size = [&](int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d) {
      int64_t o = (in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s + 1;
      if (ceil && (o - 1) * s >= in + pad) --o;
      return o;
    };
    p.oh = out_size(p.ih, p.kh, p.pt, p.sh, p.dh);
    p.ow = out_size(p.iw, p.kw, p.pl, p.sw, p.dw);
    SCOPED_TRACE(fmt::format("trial {}: in={}x{} k={}x{} s={}x{} d={}x{} pad={},{} ceil={} include_pad={}", trial,
                             p.ih, p.iw, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, ceil, p.count_include_pad));
    Tensor x = randn({p.n, p.c, p.ih, p.iw}, kFloat32, &gen);
    Tensor g = randn({p.n, p.c, p.oh, p.ow}, kFloat32, &gen), gx = empty_like(x), gx_ref = empty_like(x);
    get_kernel<AvgPool2dBackwardKernel>(Op::avg_pool2d_backward, kCPU)(p, g.data_ptr(), gx.data_ptr());
    avg_pool2d_backward_ref(p, g.data_ptr(), gx_ref.data_ptr());
    expect_close(gx, gx_ref, "avg backward");
  }
}


// ---- the vectorized max pool (Note [non-overlapping max pool]) vs the reference loop ----

PoolParams non_overlapping(int64_t n, int64_t c, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
  PoolParams p;
  p.n = n;
  p.c = c;
  p.ih = ih;
  p.iw = iw;
  p.kh = p.sh = kh;
  p.kw = p.sw = kw;
  p.oh = ih / kh;
  p.ow = iw / kw;
  return p;
}

// Inputs that exercise the tie and NaN rules: 0 normal, 1 integers in
// {0, 1, 2} (ties), 2 all equal, 3 normal with 15% NaN, 4 integers, +-inf and NaN.
Tensor pool_input(IntArrayRef shape, int mode, std::mt19937& rng) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  std::vector<float> v(static_cast<size_t>(numel));
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> pick(0, 19);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float& x : v) {
    int u = pick(rng);
    switch (mode) {
      case 0: x = normal(rng); break;
      case 1: x = static_cast<float>(u % 3); break;
      case 2: x = 1.5f; break;
      case 3: x = u < 3 ? nan : normal(rng); break;
      default: x = u == 0 ? nan : u == 1 ? inf : u == 2 ? -inf : static_cast<float>(u % 3); break;
    }
  }
  return tensor(v, shape);
}

// Bitwise, so that NaN matches NaN.
void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(std::memcmp(&x[i], &y[i], sizeof(float)), 0) << what << " at " << i << ": " << x[i] << " vs " << y[i];
}

// Forward (with and without indices) and backward of the CPU kernels against
// max_pool2d_ref / max_pool2d_backward_ref on one geometry and input.
void check_max_pool_vec(const PoolParams& p, const Tensor& x, Generator& gen) {
  ASSERT_TRUE(max_pool2d_vec_applies(p));
  Tensor out = empty({p.n, p.c, p.oh, p.ow}), out_ref = empty_like(out), out_noidx = empty_like(out);
  Tensor idx = empty({p.n, p.c, p.oh, p.ow}, kInt64), idx_ref = empty_like(idx);
  get_kernel<MaxPool2dKernel>(Op::max_pool2d_with_indices, kCPU)(p, x.data_ptr(), out.data_ptr(),
                                                                  idx.data_ptr<int64_t>());
  get_kernel<MaxPool2dKernel>(Op::max_pool2d, kCPU)(p, x.data_ptr(), out_noidx.data_ptr(), nullptr);
  max_pool2d_ref(p, x.data_ptr(), out_ref.data_ptr(), idx_ref.data_ptr<int64_t>());
  expect_same_bits(out, out_ref, "forward");
  expect_same_bits(out_noidx, out_ref, "forward without indices");
  EXPECT_EQ(idx.to_vector<int64_t>(), idx_ref.to_vector<int64_t>());
  // grad_in starts as NaN: the fast backward must write every element.
  Tensor g = randn({p.n, p.c, p.oh, p.ow}, kFloat32, &gen);
  Tensor gx = full_like(x, std::numeric_limits<float>::quiet_NaN()), gx_ref = empty_like(x);
  get_kernel<MaxPool2dBackwardKernel>(Op::max_pool2d_backward, kCPU)(p, g.data_ptr(), idx.data_ptr<int64_t>(),
                                                                     gx.data_ptr());
  max_pool2d_backward_ref(p, g.data_ptr(), idx_ref.data_ptr<int64_t>(), gx_ref.data_ptr());
  expect_same_bits(gx, gx_ref, "backward");
}

TEST(PoolKernels, MaxPoolVecMatchesReference) {
  std::mt19937 rng(5);
  Generator gen(6);
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 150; ++trial) {
    int64_t kh = r(1, 4), kw = r(2, 4);
    // Widths from 1 output (1-lane spans) to 17 (past a 16-lane vector), odd
    // sizes that leave rows and columns outside every window.
    PoolParams p = non_overlapping(r(1, 3), r(1, 5), r(kh, 40), r(kw, 17 * kw + kw - 1), kh, kw);
    int mode = trial % 5;
    SCOPED_TRACE(fmt::format("trial {}: [{}, {}, {}, {}] k={}x{} input mode {}", trial, p.n, p.c, p.ih, p.iw, kh, kw,
                             mode));
    check_max_pool_vec(p, pool_input({p.n, p.c, p.ih, p.iw}, mode, rng), gen);
  }
}

TEST(PoolKernels, MaxPoolVecThreadSplit) {
  // W1's pools at batch 16: hundreds of planes, split over the threads.
  std::mt19937 rng(7);
  Generator gen(8);
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{32, 28}, {64, 14}, {24, 15}})
    for (int mode : {0, 3, 4}) {
      SCOPED_TRACE(fmt::format("[16, {}, {}, {}] input mode {}", c, hw, hw, mode));
      PoolParams p = non_overlapping(16, c, hw, hw, 2, 2);
      check_max_pool_vec(p, pool_input({p.n, p.c, p.ih, p.iw}, mode, rng), gen);
    }
}

TEST(PoolKernels, MaxPoolVecAppliesOnlyToNonOverlappingWindows) {
  PoolParams p = non_overlapping(2, 3, 9, 9, 2, 2);
  EXPECT_TRUE(max_pool2d_vec_applies(p));
  auto with = [&](auto change) {
    PoolParams q = p;
    change(q);
    return max_pool2d_vec_applies(q);
  };
  EXPECT_FALSE(with([](PoolParams& q) { q.dtype = kFloat64; }));
  EXPECT_FALSE(with([](PoolParams& q) {  // overlapping windows
    q.sh = q.sw = 1;
    q.oh = q.ow = 8;
  }));
  EXPECT_FALSE(with([](PoolParams& q) {
    q.pt = q.pl = 1;
    q.oh = q.ow = 5;
  }));
  EXPECT_FALSE(with([](PoolParams& q) {
    q.dh = q.dw = 2;
    q.oh = q.ow = 4;
  }));
  EXPECT_FALSE(with([](PoolParams& q) { q.oh = q.ow = 5; }));  // ceil_mode's last window hangs over
  EXPECT_FALSE(with([](PoolParams& q) {
    q.kh = q.kw = q.sh = q.sw = 5;
    q.oh = q.ow = 1;
  }));
  EXPECT_FALSE(with([](PoolParams& q) {
    q.kw = q.sw = 1;
    q.ow = 9;
  }));
}

TEST(Pool, MaxPoolVecNonContiguousAndAutograd) {
  // Through the ops: a transposed input, values, indices and the input
  // gradient against the reference loops on the contiguous copy.
  Generator gen(9);
  Tensor base = randn({3, 5, 11, 14}, kFloat32, &gen);
  Tensor x = base.transpose(2, 3).detach().requires_grad_();
  ASSERT_FALSE(x.is_contiguous());
  PoolParams p = non_overlapping(3, 5, 14, 11, 2, 2);
  ASSERT_TRUE(max_pool2d_vec_applies(p));
  Tensor xc = x.detach().contiguous(), out_ref = empty({3, 5, 7, 5}), idx_ref = empty({3, 5, 7, 5}, kInt64);
  max_pool2d_ref(p, xc.data_ptr(), out_ref.data_ptr(), idx_ref.data_ptr<int64_t>());
  auto [out, idx] = max_pool2d_with_indices(x, {2});
  expect_same_bits(out, out_ref, "forward");
  EXPECT_EQ(idx.to_vector<int64_t>(), idx_ref.to_vector<int64_t>());
  Tensor g = randn({3, 5, 7, 5}, kFloat32, &gen), gx_ref = empty({3, 5, 14, 11});
  max_pool2d_backward_ref(p, g.data_ptr(), idx_ref.data_ptr<int64_t>(), gx_ref.data_ptr());
  max_pool2d(x, {2}).backward(g);
  expect_same_bits(x.grad(), gx_ref, "input gradient");
}

}  // namespace

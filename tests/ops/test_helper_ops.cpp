// The helpers op_db lists as tested elsewhere (test_op_db.cpp's
// tested_elsewhere): torch.result_type, torch.can_cast, Tensor.to(dtype) and
// as_strided's gradient. Expected dtypes are PyTorch 1.13's:
//   /usr/bin/python3 -c "import torch; t=lambda d: torch.zeros(2, dtype=d);
//     print(torch.result_type(t(torch.int64), 2.5), ...)"
// The random factories have no
// PyTorch reference values (different generators): their moments are checked
// against closed forms at 6 standard errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/autograd/gradcheck.h"
#include "ember/ember.h"

using namespace ember;

namespace {

Tensor vec2(ScalarType dt) { return zeros({2}, TensorOptions(dt)); }
Tensor zero_dim(ScalarType dt) { return scalar_tensor(1, TensorOptions(dt)); }

TEST(ResultType, MatchesPyTorch) {
  EXPECT_EQ(result_type(vec2(kInt64), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(vec2(kInt32), vec2(kInt64)), kInt64);
  EXPECT_EQ(result_type(vec2(kFloat32), zero_dim(kFloat64)), kFloat32);  // same category: the tensor wins
  EXPECT_EQ(result_type(vec2(kInt32), zero_dim(kFloat64)), kFloat64);    // higher category: the 0-dim's dtype
  EXPECT_EQ(result_type(vec2(kBool), Scalar(int64_t{3})), kInt64);
  EXPECT_EQ(result_type(vec2(kBool), Scalar(true)), kBool);
  EXPECT_EQ(result_type(vec2(kBFloat16), vec2(kFloat32)), kFloat32);
  EXPECT_EQ(result_type(vec2(kUInt8), Scalar(int64_t{-1})), kUInt8);
  EXPECT_EQ(result_type(vec2(kInt16), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(vec2(kInt16), Scalar(int64_t{70000})), kInt16);
  EXPECT_EQ(result_type(vec2(kUInt8), vec2(kInt8)), kInt16);
}

TEST(CanCast, MatchesPyTorch) {
  EXPECT_FALSE(can_cast(kFloat32, kInt32));
  EXPECT_TRUE(can_cast(kInt32, kFloat32));
  EXPECT_TRUE(can_cast(kFloat64, kFloat32));
  EXPECT_TRUE(can_cast(kBool, kUInt8));
  EXPECT_TRUE(can_cast(kInt16, kInt8));
  EXPECT_FALSE(can_cast(kFloat32, kInt16));
  EXPECT_FALSE(can_cast(kInt64, kBool));
  EXPECT_TRUE(can_cast(kUInt8, kInt8));
  EXPECT_TRUE(can_cast(kFloat32, kBFloat16));
}

TEST(ToDtype, ConvertsAndCopiesOnlyWhenAsked) {
  Tensor x = tensor<float>({1.5f, -2.75f, 3.0f}, {3});
  Tensor d = to_dtype(x, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1.5, -2.75, 3.0}));
  Tensor i = x.to(kInt64);  // truncates toward zero, as PyTorch
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_TRUE(to_dtype(x, kFloat32).is_same(x));
  EXPECT_FALSE(to_dtype(x, kFloat32, /*copy=*/true).is_same(x));
}

// Overlapping windows: as_strided's backward (as_strided_backward) has to sum
// the gradient of every window an element appears in.
TEST(AsStridedBackward, FiniteDifferencesWithOverlap) {
  Generator gen(3);
  Tensor x = randn({9}, kFloat64, &gen).requires_grad_();
  autograd::gradcheck([](const variable_list& in) { return variable_list{in[0].as_strided({3, 4}, {2, 1}, 1)}; },
                      {x});
  Tensor y = x.as_strided({3, 4}, {2, 1}, 1);
  y.sum().backward();
  // Element k (offset 1) is in windows r with 0 <= k - 1 - 2r < 4.
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 1, 1, 2, 2, 2, 2, 1, 1}));
}

struct Moments {
  double mean, var;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = t.to(kFloat64).to_vector<double>();
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, var / static_cast<double>(v.size() - 1)};
}

constexpr int64_t kN = 200000;
const double kSe = 6.0 / std::sqrt(static_cast<double>(kN));  // 6 standard errors per unit of std

TEST(RandomFactories, MomentsMatchTheirDistributions) {
  Generator gen(11);
  Tensor u = rand({kN}, TensorOptions(kFloat32), &gen);
  auto [umin, umax] = std::minmax_element(u.data_ptr<float>(), u.data_ptr<float>() + kN);
  EXPECT_GE(*umin, 0.0f);
  EXPECT_LT(*umax, 1.0f);
  Moments mu = moments(u);  // U[0, 1): mean 1/2, variance 1/12
  EXPECT_NEAR(mu.mean, 0.5, kSe * std::sqrt(1.0 / 12));
  EXPECT_NEAR(mu.var, 1.0 / 12, 0.01);

  Moments mn = moments(randn({kN}, TensorOptions(kFloat64), &gen));
  EXPECT_NEAR(mn.mean, 0.0, kSe);
  EXPECT_NEAR(mn.var, 1.0, 0.02);

  Tensor k = randint(-3, 5, {kN}, TensorOptions(kInt64), &gen);  // uniform on {-3, ..., 4}
  std::vector<int64_t> kv = k.to_vector<int64_t>();
  EXPECT_EQ(*std::min_element(kv.begin(), kv.end()), -3);
  EXPECT_EQ(*std::max_element(kv.begin(), kv.end()), 4);
  EXPECT_NEAR(moments(k).mean, 0.5, kSe * std::sqrt((64.0 - 1) / 12));

  Tensor b = bernoulli(zeros({kN}, TensorOptions(kFloat32)), 0.3, &gen);
  EXPECT_NEAR(moments(b).mean, 0.3, kSe * std::sqrt(0.3 * 0.7));
  Tensor p = tensor<double>({0, 0, 1, 0}, {4}, TensorOptions(kFloat64));
  EXPECT_EQ(bernoulli(p, &gen).to_vector<double>(), (std::vector<double>{0, 0, 1, 0}));  // p in {0, 1}: exact
}

TEST(RandomFactories, PermutationsLikeAndSeeds) {
  Generator gen(5);
  std::vector<int64_t> perm = randperm(1000, TensorOptions(kInt64), &gen).to_vector<int64_t>();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(perm, iota);

  Tensor like = zeros({3, 5}, TensorOptions(kFloat64));
  for (const Tensor& r : {rand_like(like, &gen), randn_like(like, &gen)}) {
    EXPECT_EQ(r.sizes().vec(), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(r.dtype(), kFloat64);
  }
  Generator a(42), b(42);
  EXPECT_EQ(randn({64}, TensorOptions(kFloat32), &a).to_vector<float>(),
            randn({64}, TensorOptions(kFloat32), &b).to_vector<float>());
}

}  // namespace

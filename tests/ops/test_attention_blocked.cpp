// scaled_dot_product_attention's blocked float32 kernel (Note [blocked
// attention]) against the composite evaluated in float64 (itself checked
// against PyTorch in op_db), with sequences longer than a tile so the online
// softmax crosses tiles: outputs and the gradients of q, k and v, under no
// mask, is_causal, bool and float masks, and dropout (the same random
// numbers: the float64 composite draws the same keep decisions).
#include <gtest/gtest.h>

#include <cmath>

#include "ember/autograd/autograd.h"
#include "ember/ember.h"
#include "ops/attention_internal.h"

using namespace ember;

namespace {

double rel_err(const Tensor& a, const Tensor& b) {
  return max(abs(a.to(kFloat64) - b) / (abs(b) + 1)).item<double>();
}

struct Case {
  const char* name;
  bool causal = false;
  Tensor mask;  // float64; cast to float32 for the kernel when floating
  double dropout = 0;
};

void check(const Case& c, int64_t L, int64_t S) {
  SCOPED_TRACE(c.name);
  Generator gen(1);
  Tensor q64 = randn({2, 3, L, 16}, kFloat64, &gen), k64 = randn({2, 3, S, 16}, kFloat64, &gen),
         v64 = randn({2, 3, S, 8}, kFloat64, &gen), dy = randn({2, 3, L, 8}, kFloat64, &gen);
  auto run = [&](ScalarType dt) {
    Tensor q = q64.to(dt).detach().requires_grad_(true), k = k64.to(dt).detach().requires_grad_(true),
           v = v64.to(dt).detach().requires_grad_(true);
    Tensor mask = c.mask.defined() && c.mask.is_floating_point() ? c.mask.to(dt) : c.mask;
    Generator drop(42);
    Tensor y = dt == kFloat32
                   ? detail::scaled_dot_product_attention_blocked(q, k, v, mask, c.dropout, c.causal, std::nullopt,
                                                                  &drop)
                   : scaled_dot_product_attention(q, k, v, mask, c.dropout, c.causal, std::nullopt, &drop);
    (y * dy.to(dt)).sum().backward();
    return std::vector<Tensor>{y.detach(), q.grad(), k.grad(), v.grad()};
  };
  auto f = run(kFloat32), r = run(kFloat64);
  const char* what[] = {"output", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) EXPECT_LT(rel_err(f[i], r[i]), 2e-5) << what[i];
}

}  // namespace

// detail::scaled_dot_product_attention_blocked: the kernel on shapes below
// attention_runs_blocked's threshold, which OnlyTrainingOnLargeScores tests.
TEST(AttentionBlocked, MatchesTheFloat64CompositeAcrossTiles) {
  const int64_t L = 300, S = 520;  // 2 x 3 tiles of 256
  Generator gen(3);
  check({"plain", false, Tensor()}, L, S);
  check({"causal", true, Tensor()}, L, S);
  check({"bool mask", false, gt(rand({L, S}, kFloat64, &gen), 0.3)}, L, S);
  check({"float mask", false, randn({3, 1, S}, kFloat64, &gen)}, L, S);
  check({"dropout", false, Tensor(), 0.2}, L, S);
  check({"causal dropout", true, Tensor(), 0.5}, L, S);
}

TEST(AttentionBlocked, ARowMaskedInItsFirstTileTakesItsWeightsFromTheNext) {
  // Query row 0 sees only keys past the first tile: its running max is -inf
  // through tile one, and must not turn into NaN.
  const int64_t L = 4, S = 600;
  Tensor mask = ones({L, S}, TensorOptions(kBool));
  mask.narrow(0, 0, 1).narrow(1, 0, 300).fill_(false);
  Generator gen(6);
  Tensor q = randn({1, L, 8}, kFloat64, &gen), k = randn({1, S, 8}, kFloat64, &gen),
         v = randn({1, S, 4}, kFloat64, &gen);
  // Gradients recorded: the blocked kernel's case.
  Tensor q32 = q.to(kFloat32).requires_grad_(true), k32 = k.to(kFloat32), v32 = v.to(kFloat32);
  Tensor y = detail::scaled_dot_product_attention_blocked(q32, k32, v32, mask, 0.0, false, std::nullopt, nullptr);
  ASSERT_EQ(y.grad_fn()->name(), std::string("ScaledDotProductFlashAttentionBackward0"));
  Tensor want = scaled_dot_product_attention(q, k, v, mask);
  EXPECT_LT(rel_err(y.detach(), want), 1e-5);
  // A row with no key at all is NaN, as the composite's softmax over -inf.
  mask.narrow(0, 1, 1).fill_(false);
  y = detail::scaled_dot_product_attention_blocked(q32, k32, v32, mask, 0.0, false, std::nullopt, nullptr).detach();
  EXPECT_TRUE(std::isnan(y[0][1][0].item<float>()));
  EXPECT_FALSE(std::isnan(y[0][0][0].item<float>()));
}

TEST(AttentionBlocked, OnlyTrainingOnLargeScores) {
  EXPECT_FALSE(attention_runs_blocked(1 << 10, kAttentionTile, kAttentionTile));  // one key tile
  EXPECT_FALSE(attention_runs_blocked(64, 512, 511));                            // below 2^24 scores
  EXPECT_TRUE(attention_runs_blocked(64, 512, 512));
  // [1, 4096, 4096] scores: 2^24, blocked when training.
  Tensor q = randn({1, 4096, 4}).requires_grad_(true);
  Tensor y = scaled_dot_product_attention(q, q, q);
  EXPECT_EQ(y.grad_fn()->name(), std::string("ScaledDotProductFlashAttentionBackward0"));
  Tensor s = q.narrow(1, 0, 4095);  // just below: the composite (its last op a matmul)
  EXPECT_NE(scaled_dot_product_attention(s, s, s).grad_fn()->name(),
            std::string("ScaledDotProductFlashAttentionBackward0"));
  // Inference: the composite, the ops a traced graph records.
  NoGradGuard no_grad;
  Tensor a = scaled_dot_product_attention(q, q, q);
  EXPECT_FALSE(a.grad_fn());
  EXPECT_LT(max(abs(a - y.detach())).item<double>(), 1e-5);
}

TEST(AttentionBlocked, DoubleBackwardIsRefusedWithTheWayOut) {
  Tensor q = randn({1, 20, 8}).requires_grad_(true);
  auto blocked = [&] { return detail::scaled_dot_product_attention_blocked(q, q, q, Tensor(), 0, false, {}, nullptr); };
  auto g = autograd::grad({blocked().sum()}, {q}, {}, std::nullopt, /*create_graph=*/false);
  EXPECT_EQ(g[0].sizes().vec(), (std::vector<int64_t>{1, 20, 8}));
  Tensor y2 = blocked();
  try {
    autograd::grad({y2.sum()}, {q}, {}, std::nullopt, /*create_graph=*/true);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("float64"), std::string::npos) << e.what();
  }
}

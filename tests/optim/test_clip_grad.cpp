// clip_grad_norm_ / clip_grad_value_ vs PyTorch 1.13 (tests/data/gen_optim.py).
#include <cmath>
#include <limits>

#include "ember/optim.h"
#include "optim_golden.h"

using namespace ember;
using namespace ember::optim;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::optim_golden;

namespace {
std::vector<Tensor> clip_params() {
  Tensor p1 = zeros({3, 4}, kFloat64).requires_grad_();
  Tensor p2 = zeros({5}, kFloat64).requires_grad_();
  p1.set_grad(sin(arange(12).to(kFloat64) * 0.9).view({3, 4}) * 2);
  p2.set_grad(cos(arange(5).to(kFloat64) * 1.3) - 0.5);
  return {p1, p2};
}
std::vector<double> grads(const std::vector<Tensor>& ps) {
  std::vector<double> v = ps[0].grad().to_vector<double>();
  std::vector<double> w = ps[1].grad().to_vector<double>();
  v.insert(v.end(), w.begin(), w.end());
  return v;
}
}  // namespace

TEST(OptimClipGrad, NormMatchesPyTorch) {
  struct C {
    const char* name;
    double max_norm, norm_type;
  };
  for (C c : {C{"l2", 1.0, 2.0}, C{"l1", 2.5, 1.0}, C{"inf", 0.5, kInfNorm}, C{"l3", 1.5, 3.0},
              C{"l2_no_clip", 100.0, 2.0}}) {
    const auto& [total, clipped] = optim_golden().clip.at(c.name);
    auto ps = clip_params();
    Tensor t = clip_grad_norm_(ps, c.max_norm, c.norm_type);
    EXPECT_EQ(t.dim(), 0);
    EXPECT_NEAR(t.item<double>(), total, 1e-12) << c.name;
    expect_values(Tensor(tensor(grads(ps))), {17}, clipped, 1e-12, 1e-14);
  }
}

TEST(OptimClipGrad, ValueMatchesPyTorch) {
  auto ps = clip_params();
  clip_grad_value_(ps, 0.7);
  expect_values(tensor(grads(ps)), {17}, optim_golden().clip.at("value_0.7").second, 0, 0);
}

TEST(OptimClipGrad, NonFiniteNormRaisesOnlyWhenAsked) {
  auto ps = clip_params();
  ps[1].set_grad(tensor<double>({1.0, std::numeric_limits<double>::infinity(), 0.0, 0.0, 0.0}));
  expect_error([&] { clip_grad_norm_(ps, 1.0, 2.0, /*error_if_nonfinite=*/true); },
               {"The total norm of order 2 for gradients from `parameters` is non-finite", "error_if_nonfinite"});
  // Without the flag the gradients are scaled by the non-finite norm, like PyTorch.
  Tensor t = clip_grad_norm_(ps, 1.0);
  EXPECT_TRUE(std::isinf(t.item<double>()));
}

TEST(OptimClipGrad, SkipsParamsWithoutGrad) {
  Tensor p = zeros({3}).requires_grad_();
  EXPECT_EQ(clip_grad_norm_({p}, 1.0).item<double>(), 0.0);
  auto ps = clip_params();
  ps.push_back(zeros({2}, kFloat64).requires_grad_());
  Tensor t = clip_grad_norm_(ps, 1.0);
  EXPECT_NEAR(t.item<double>(), optim_golden().clip.at("l2").first, 1e-12);
}

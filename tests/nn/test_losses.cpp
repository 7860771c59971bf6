// Losses against PyTorch 1.13: values and input gradients (float64),
// including class weights, ignore_index, label smoothing, probability
// targets and every reduction.
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;
namespace F = ember::nn::functional;

namespace {
using LossFn = std::function<Tensor(const Tensor&, const Tensor&)>;

void check_loss(const std::string& name, const LossFn& fn) {
  SCOPED_TRACE(name);
  Tensor x = golden(name + ".x").clone().requires_grad_();
  Tensor y = fn(x, golden(name + ".t"));
  expect_close(y, golden(name + ".y"), name + " value");
  (y * golden(name + ".gy")).sum().backward();
  expect_close(x.grad(), golden(name + ".gx"), name + " input grad");
}
}  // namespace

TEST(NnLosses, CrossEntropyMatchesPyTorch) {
  Tensor w = golden("ce_weight_ignore.w");
  check_loss("ce", [](auto& x, auto& t) { return nn::CrossEntropyLoss()(x, t); });
  check_loss("ce_weight_ignore", [&](auto& x, auto& t) { return F::cross_entropy(x, t, {.weight = w, .ignore_index = 1}); });
  check_loss("ce_smooth", [](auto& x, auto& t) {
    return F::cross_entropy(x, t, {.ignore_index = 1, .label_smoothing = 0.1});
  });
  check_loss("ce_smooth_weight", [&](auto& x, auto& t) {
    return nn::CrossEntropyLoss({.weight = w, .ignore_index = 1, .label_smoothing = 0.2})(x, t);
  });
  check_loss("ce_smooth_weight_sum", [&](auto& x, auto& t) {
    return F::cross_entropy(x, t, {.weight = w, .reduction = "sum", .label_smoothing = 0.2});
  });
  check_loss("ce_none", [&](auto& x, auto& t) {
    return F::cross_entropy(x, t, {.weight = w, .ignore_index = 3, .reduction = "none"});
  });
  check_loss("ce_sum", [](auto& x, auto& t) { return F::cross_entropy(x, t, {.reduction = "sum"}); });
  check_loss("ce_prob", [&](auto& x, auto& t) { return F::cross_entropy(x, t, {.weight = w, .label_smoothing = 0.2}); });
  check_loss("ce_prob_none", [](auto& x, auto& t) { return F::cross_entropy(x, t, {.reduction = "none"}); });
  Tensor w3 = golden("ce_nd.w");
  check_loss("ce_nd", [&](auto& x, auto& t) { return F::cross_entropy(x, t, {.weight = w3}); });
  check_loss("ce_1d", [](auto& x, auto& t) { return F::cross_entropy(x, t); });
}

TEST(NnLosses, CrossEntropyIsStableForHugeLogits) {
  Tensor x = tensor<float>({1000.f, -1000.f, 0.f, 0.f, 5000.f, 0.f}, {2, 3}).requires_grad_();
  Tensor loss = F::cross_entropy(x, tensor<int64_t>({1, 2}));
  loss.backward();
  EXPECT_NEAR(loss.item<double>(), (2000.0 + 5000.0) / 2, 1e-3);
  EXPECT_TRUE(isfinite(x.grad()).all().item<bool>());
}

TEST(NnLosses, NllAndBinaryLossesMatchPyTorch) {
  Tensor w = golden("nll.w");
  check_loss("nll", [&](auto& x, auto& t) { return nn::NLLLoss({.weight = w, .ignore_index = 0})(x, t); });
  Tensor bw = golden("bce.w");
  check_loss("bce", [&](auto& x, auto& t) { return nn::BCELoss({.weight = bw})(x, t); });
  Tensor pw = golden("bce_logits.pw");
  check_loss("bce_logits", [&](auto& x, auto& t) {
    return nn::BCEWithLogitsLoss({.weight = bw, .pos_weight = pw})(x, t);
  });
  check_loss("bce_logits_plain", [](auto& x, auto& t) {
    return F::binary_cross_entropy_with_logits(x, t, {.reduction = "sum"});
  });
}

TEST(NnLosses, RegressionLossesMatchPyTorch) {
  check_loss("mse", [](auto& x, auto& t) { return nn::MSELoss()(x, t); });
  check_loss("l1", [](auto& x, auto& t) { return nn::L1Loss("sum")(x, t); });
  check_loss("smooth_l1", [](auto& x, auto& t) { return nn::SmoothL1Loss("mean", 2.0)(x, t); });
  check_loss("huber", [](auto& x, auto& t) { return nn::HuberLoss("none", 1.5)(x, t); });
}

TEST(NnLosses, KLDivMatchesPyTorch) {
  check_loss("kl_batchmean", [](auto& x, auto& t) { return nn::KLDivLoss({.reduction = "batchmean"})(x, t); });
  check_loss("kl_log_target", [](auto& x, auto& t) {
    return F::kl_div(x, t, {.reduction = "sum", .log_target = true});
  });
  check_loss("kl_mean", [](auto& x, auto& t) { return F::kl_div(x, t); });
}

TEST(NnLosses, ErrorsNameTheLossAndTheProblem) {
  Tensor x = zeros({3, 4});
  expect_error([&] { F::cross_entropy(x, tensor<int64_t>({0, 4, 1})); }, {"cross_entropy", "Target 4", "out of bounds"});
  expect_error([&] { F::cross_entropy(x, tensor<int64_t>({0, 1})); }, {"cross_entropy", "target of shape [3]", "[2]"});
  expect_error([&] { F::mse_loss(x, zeros({4, 3})); }, {"mse_loss", "same shape"});
  expect_error([] { nn::MSELoss("avg"); }, {"MSELoss", "reduction", "avg"});
  expect_error([&] { F::cross_entropy(x, tensor<int64_t>({0, 1, 2}), {.weight = ones({3})}); },
               {"weight of shape [4]"});
}

TEST(NnLosses, AllIgnoredMeanIsNanLikePyTorch) {
  Tensor l = F::cross_entropy(zeros({2, 3}), tensor<int64_t>({-100, -100}));
  EXPECT_TRUE(std::isnan(l.item<double>()));
}

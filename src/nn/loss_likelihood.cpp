// Likelihood losses: poisson_nll_loss, gaussian_nll_loss and ctc_loss as
// composites (PyTorch 1.13's formulas), and their modules.
#include <cmath>
#include <limits>
#include <numbers>

#include "ember/nn/loss.h"

#include "ops/op_util.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "nn/loss_util.h"

namespace ember::nn {
namespace functional {

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLOptions& o) {
  const char* op = "poisson_nll_loss";
  check_reduction(o.reduction, op);
  // Integer inputs take PyTorch's promotions: exp and log make them floating point.
  Tensor loss = o.log_input ? exp(input) - target * input : input - target * log(input + o.eps);
  if (o.full) {
    // Stirling's log(target!) ~ t log t - t + 0.5 log(2 pi t), only where target > 1.
    Tensor stirling = target * log(target) - target + log(target * (2 * std::numbers::pi)) * 0.5;
    loss = loss + masked_fill(stirling, le(target, 1), 0);
  }
  return reduce(loss, o.reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, const GaussianNLLOptions& o) {
  const char* op = "gaussian_nll_loss";
  check_reduction(o.reduction, op);
  EMBER_CHECK_TYPE(input.is_floating_point(), "{}: expected a floating-point input, got {}", op,
                   to_string(input.dtype()));
  Tensor v = var;
  if (v.sizes().vec() != input.sizes().vec()) {
    // Homoscedastic: var lacks the last dim, or has size 1 there.
    std::vector<int64_t> lead(input.sizes().begin(), input.sizes().end() - (input.dim() > 0 ? 1 : 0));
    std::vector<int64_t> vs = v.sizes().vec();
    if (input.dim() > 0 && vs == lead) {
      v = v.unsqueeze(-1);
    } else {
      EMBER_CHECK(input.dim() > 0 && v.dim() == input.dim() && v.size(-1) == 1 &&
                      std::vector<int64_t>(vs.begin(), vs.end() - 1) == lead,
                  "{}: var is of incorrect size: {} for input {}", op, shape_str(var.sizes()),
                  shape_str(input.sizes()));
    }
  }
  EMBER_CHECK(!any(lt(v, 0)).item<bool>(), "{}: var has negative entry/entries", op);
  // PyTorch clamps under no_grad: the value is clamped, the gradient passes through.
  v = v + (clamp_min(v, o.eps) - v).detach();
  Tensor loss = (log(v) + square(input - target) / v) * 0.5;
  if (o.full) loss = loss + 0.5 * std::log(2 * std::numbers::pi);
  return reduce(loss, o.reduction);
}

namespace {

// log(sum(exp(x), dim 0)) that is -inf (with zero gradient, never NaN) where
// every term is -inf: unreachable CTC states stay harmless in backward.
Tensor logsumexp0(const Tensor& x) {
  Tensor m = amax(x, {0}).detach();
  Tensor finite = isfinite(m);
  Tensor shift = where(finite, m, zeros({}, TensorOptions(m.dtype())));
  Tensor s = sum(exp(x - shift), {0});
  Tensor positive = gt(s, 0.0);
  Tensor safe = where(positive, s, ones({}, TensorOptions(s.dtype())));
  return where(positive, log(safe) + shift, -std::numeric_limits<double>::infinity());
}

// [N, K] shifted right by k along dim 1, -inf coming in.
Tensor shift_right(const Tensor& a, int64_t k) {
  int64_t n = a.size(0), len = a.size(1);
  if (k >= len) return full({n, len}, -std::numeric_limits<double>::infinity(), TensorOptions(a.dtype()));
  return cat({full({n, k}, -std::numeric_limits<double>::infinity(), TensorOptions(a.dtype())), a.narrow(1, 0, len - k)},
             1);
}

}  // namespace

// Note [ctc as a composite]: the forward (alpha) recursion over the extended
// label sequence blank, l1, blank, l2, ..., blank, batched over N and looped
// over T; autograd differentiates it (PyTorch's hand-written backward gives
// the same gradient once log_probs come from log_softmax, see the op_db case).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCOptions& o) {
  const char* op = "ctc_loss";
  check_reduction(o.reduction, op);
  EMBER_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2, "{}: expected log_probs (T, N, C) or (T, C), got {}", op,
              shape_str(log_probs.sizes()));
  EMBER_CHECK_TYPE(log_probs.is_floating_point(), "{}: expected floating-point log_probs, got {}", op,
                   to_string(log_probs.dtype()));
  bool batched = log_probs.dim() == 3;
  Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
  int64_t t_max = lp.size(0), n = lp.size(1), c = lp.size(2);
  EMBER_CHECK(o.blank >= 0 && o.blank < c, "{}: blank must be in label range [0, {}), got {}", op, c, o.blank);
  std::vector<int64_t> in_len = input_lengths.to(kInt64).reshape({-1}).to_vector<int64_t>();
  std::vector<int64_t> tg_len = target_lengths.to(kInt64).reshape({-1}).to_vector<int64_t>();
  EMBER_CHECK(static_cast<int64_t>(in_len.size()) == n && static_cast<int64_t>(tg_len.size()) == n,
              "{}: expected input_lengths and target_lengths of size {} (the batch), got {} and {}", op, n,
              in_len.size(), tg_len.size());
  // Targets per batch entry, from the padded (N, S) or the concatenated 1-D form.
  std::vector<int64_t> tv = targets.to(kInt64).reshape({-1}).to_vector<int64_t>();
  bool padded = batched && targets.dim() == 2;
  int64_t s_max = 0;
  for (int64_t b = 0; b < n; ++b) {
    EMBER_CHECK(in_len[b] >= 0 && in_len[b] <= t_max, "{}: Expected input_lengths to have value at most {}, but got "
                "value {}", op, t_max, in_len[b]);
    EMBER_CHECK(tg_len[b] >= 0, "{}: target_lengths must be non-negative, got {}", op, tg_len[b]);
    s_max = std::max(s_max, tg_len[b]);
  }
  int64_t k = 2 * s_max + 1;
  std::vector<int64_t> ext(static_cast<size_t>(n * k), o.blank);
  std::vector<bool> skip(static_cast<size_t>(n * k), false);  // may come from s - 2
  int64_t offset = 0;
  for (int64_t b = 0; b < n; ++b) {
    int64_t base = padded ? b * targets.size(1) : offset;
    EMBER_CHECK(!padded || tg_len[b] <= targets.size(1),
                "{}: Expected tensor to have size at least {} at dimension 1, but got size {}", op, tg_len[b],
                targets.size(1));
    for (int64_t s = 0; s < tg_len[b]; ++s) {
      EMBER_CHECK(base + s < static_cast<int64_t>(tv.size()), "{}: targets hold fewer labels than target_lengths sum to",
                  op);
      int64_t label = tv[base + s];
      EMBER_CHECK_INDEX(label >= 0 && label < c && label != o.blank,
                        "{}: target label {} is out of range [0, {}) or the blank", op, label, c);
      ext[b * k + 2 * s + 1] = label;
      if (s > 0 && label != tv[base + s - 1]) skip[b * k + 2 * s + 1] = true;
    }
    offset += tg_len[b];
  }
  const double inf = std::numeric_limits<double>::infinity();
  TensorOptions fo(lp.dtype());
  Tensor ext_t = tensor<int64_t>(ext, {n, k}, TensorOptions(kInt64));
  std::vector<double> skip_d(skip.begin(), skip.end());
  Tensor skip_ok = tensor<double>(skip_d, {n, k}, TensorOptions(kFloat64)).to(kBool);
  // alpha_0: blank or the first label.
  std::vector<double> init(static_cast<size_t>(n * k), -inf);
  for (int64_t b = 0; b < n; ++b) {
    init[b * k] = 0;
    if (tg_len[b] > 0) init[b * k + 1] = 0;
  }
  Tensor start = tensor<double>(init, {n, k}, TensorOptions(kFloat64)).to(lp.dtype());
  Tensor alpha = start + gather(lp.select(0, 0), 1, ext_t);
  Tensor neg_inf = full({}, -inf, fo);
  for (int64_t t = 1; t < t_max; ++t) {
    Tensor from2 = where(skip_ok, shift_right(alpha, 2), neg_inf);
    Tensor next = logsumexp0(stack({alpha, shift_right(alpha, 1), from2}, 0)) + gather(lp.select(0, t), 1, ext_t);
    std::vector<double> active(static_cast<size_t>(n));
    for (int64_t b = 0; b < n; ++b) active[b] = t < in_len[b] ? 1 : 0;
    Tensor act = tensor<double>(active, {n, 1}, TensorOptions(kFloat64)).to(kBool);
    alpha = where(act, next, alpha);
  }
  // End in the last label or the final blank.
  std::vector<int64_t> last, before;
  for (int64_t b = 0; b < n; ++b) {
    last.push_back(2 * tg_len[b]);
    before.push_back(tg_len[b] > 0 ? 2 * tg_len[b] - 1 : 2 * tg_len[b]);
  }
  Tensor a_last = gather(alpha, 1, tensor<int64_t>(last, {n, 1}, TensorOptions(kInt64))).squeeze(1);
  Tensor a_before = gather(alpha, 1, tensor<int64_t>(before, {n, 1}, TensorOptions(kInt64))).squeeze(1);
  std::vector<double> two(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) two[b] = tg_len[b] > 0 ? 1 : 0;
  Tensor has_two = tensor<double>(two, {n}, TensorOptions(kFloat64)).to(kBool);
  Tensor ll = logsumexp0(stack({a_last, where(has_two, a_before, neg_inf)}, 0));
  // An input_length of 0 has no alignment unless the target is empty too.
  for (int64_t b = 0; b < n; ++b)
    if (in_len[b] == 0) {
      std::vector<double> mask(static_cast<size_t>(n), 0);
      mask[b] = 1;
      Tensor mb = tensor<double>(mask, {n}, TensorOptions(kFloat64)).to(kBool);
      ll = where(mb, tg_len[b] == 0 ? zeros({}, fo) : neg_inf, ll);
    }
  Tensor loss = -ll;
  if (o.zero_infinity) loss = where(isfinite(loss), loss, zeros({}, fo));
  if (o.reduction == "mean") {
    std::vector<double> len(tg_len.begin(), tg_len.end());
    for (double& v : len) v = std::max(v, 1.0);
    return mean(loss / tensor<double>(len, {n}, TensorOptions(kFloat64)).to(lp.dtype()));
  }
  if (o.reduction == "sum") return sum(loss);
  return batched ? loss : loss.squeeze(0);
}

}  // namespace functional

// ---- modules ----

PoissonNLLLoss::PoissonNLLLoss(PoissonNLLOptions o) : Loss("PoissonNLLLoss"), options(std::move(o)) {
  functional::check_reduction(options.reduction, "PoissonNLLLoss");
}
Tensor PoissonNLLLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::poisson_nll_loss(input, target, options);
}

GaussianNLLLoss::GaussianNLLLoss(GaussianNLLOptions o) : ThreeInputLoss("GaussianNLLLoss"), options(std::move(o)) {
  functional::check_reduction(options.reduction, "GaussianNLLLoss");
}
Tensor GaussianNLLLoss::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return functional::gaussian_nll_loss(input, target, var, options);
}

CTCLoss::CTCLoss(CTCOptions o) : Module("CTCLoss"), options(std::move(o)) {
  functional::check_reduction(options.reduction, "CTCLoss");
}
Tensor CTCLoss::forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                        const Tensor& target_lengths) {
  return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

}  // namespace ember::nn

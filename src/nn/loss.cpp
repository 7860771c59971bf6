// Losses as composites of differentiable ops, with PyTorch's reductions and
// weighting rules.
#include "ember/nn/loss.h"

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "nn/loss_util.h"

namespace ember::nn {
namespace functional {

namespace {
std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s.vec(), ", ")); }

void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(input.sizes().vec() == target.sizes().vec(),
              "{}: expected target of the same shape as input {}, got {}; reshape or broadcast it explicitly", op,
              shape_str(input.sizes()), shape_str(target.sizes()));
}

// [1, C, 1, ...] view of per-class weights for (N, C, *) input.
Tensor class_view(const Tensor& w, int64_t ndim) {
  std::vector<int64_t> s(static_cast<size_t>(ndim), 1);
  s[1] = w.size(0);
  return w.view(s);
}

// nll on log-probabilities logp (N, C, *) with class targets (N, *).
Tensor nll_nd(const Tensor& logp, const Tensor& target, const Tensor& weight, int64_t ignore_index,
              const std::string& reduction, const char* op) {
  EMBER_CHECK_TYPE(target.dtype() == kInt64 || target.dtype() == kInt32,
                   "{}: expected class-index target of dtype int64, got {}", op, to_string(target.dtype()));
  int64_t c = logp.size(1);
  std::vector<int64_t> expect = logp.sizes().vec();
  expect.erase(expect.begin() + 1);
  EMBER_CHECK(target.sizes().vec() == expect, "{}: expected target of shape {} for input {}, got {}", op,
              shape_str(expect), shape_str(logp.sizes()), shape_str(target.sizes()));
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.size(0) == c),
              "{}: expected weight of shape [{}] (one per class), got {}", op, c, shape_str(weight.sizes()));
  Tensor t = target.to(kInt64);
  Tensor valid = ne(t, ignore_index);
  Tensor safe = where(valid, t, zeros({}, kInt64));
  if (safe.numel() > 0) {
    int64_t lo = amin(safe).item<int64_t>(), hi = amax(safe).item<int64_t>();
    EMBER_CHECK_INDEX(lo >= 0 && hi < c, "{}: Target {} is out of bounds for {} classes", op, lo < 0 ? lo : hi, c);
  }
  Tensor picked = gather(logp, 1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = valid.to(logp.dtype());
  if (weight.defined()) w = w * index_select(weight.to(logp.dtype()), 0, safe.reshape({-1})).view(safe.sizes());
  Tensor loss = -picked * w;
  if (reduction == "mean") return sum(loss) / sum(w);
  if (reduction == "sum") return sum(loss);
  return loss;
}

// 1-D input (C) is a batch of one.
std::pair<Tensor, Tensor> batchify(const Tensor& input, const Tensor& target) {
  if (input.dim() != 1) return {input, target};
  return {input.unsqueeze(0), target.unsqueeze(0)};
}
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLOptions& o) {
  check_reduction(o.reduction, "nll_loss");
  EMBER_CHECK(input.dim() >= 1, "nll_loss: expected input (N, C, *) or (C), got shape {}", shape_str(input.sizes()));
  auto [x, t] = batchify(input, target);
  Tensor out = nll_nd(x, t, o.weight, o.ignore_index, o.reduction, "nll_loss");
  return input.dim() == 1 && o.reduction == "none" ? out.squeeze(0) : out;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& o) {
  check_reduction(o.reduction, "cross_entropy");
  EMBER_CHECK(o.label_smoothing >= 0 && o.label_smoothing <= 1,
              "cross_entropy: label_smoothing must be between 0.0 and 1.0, got {}", o.label_smoothing);
  EMBER_CHECK(input.dim() >= 1, "cross_entropy: expected input (N, C, *) or (C), got shape {}",
              shape_str(input.sizes()));
  bool prob_target = target.is_floating_point();
  auto [x, t] = batchify(input, target);
  int64_t c = x.size(1);
  double eps = o.label_smoothing;
  Tensor logp = log_softmax(x, 1);
  Tensor out;
  if (prob_target) {
    check_same_shape(x, t, "cross_entropy");
    Tensor tt = eps > 0 ? t * (1 - eps) + eps / static_cast<double>(c) : t;
    Tensor prod = logp * tt;
    if (o.weight.defined()) prod = prod * class_view(o.weight.to(logp.dtype()), x.dim());
    if (o.reduction == "mean") {
      out = -sum(prod) / static_cast<double>(x.numel() / c);
    } else if (o.reduction == "sum") {
      out = -sum(prod);
    } else {
      out = -sum(prod, {1});
    }
  } else {
    out = nll_nd(logp, t, o.weight, o.ignore_index, o.reduction, "cross_entropy");
    if (eps > 0) {
      // PyTorch's smoothing term: -sum_c w_c logp_c per position, ignored
      // positions zeroed; "mean" divides by the same weight sum as nll.
      Tensor smooth = o.weight.defined() ? -sum(logp * class_view(o.weight.to(logp.dtype()), x.dim()), {1})
                                         : -sum(logp, {1});
      Tensor valid = ne(t.to(kInt64), o.ignore_index);
      smooth = smooth * valid.to(smooth.dtype());
      Tensor ret;
      if (o.reduction == "mean") {
        if (o.weight.defined()) {
          Tensor safe = where(valid, t.to(kInt64), zeros({}, kInt64)).reshape({-1});
          Tensor wsum = sum(index_select(o.weight.to(logp.dtype()), 0, safe) * valid.reshape({-1}).to(logp.dtype()));
          ret = sum(smooth) / wsum;
        } else {
          ret = sum(smooth) / sum(valid.to(smooth.dtype()));
        }
      } else {
        ret = reduce(smooth, o.reduction);
      }
      out = out * (1 - eps) + ret * (eps / static_cast<double>(c));
    }
  }
  return input.dim() == 1 && o.reduction == "none" ? out.squeeze(0) : out;
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BCEOptions& o) {
  check_reduction(o.reduction, "binary_cross_entropy");
  check_same_shape(input, target, "binary_cross_entropy");
  // Clamping the logs at -100 keeps 0 * log(0) finite, as PyTorch does.
  Tensor log_x = clamp_min(log(input), -100);
  Tensor log_1mx = clamp_min(log(rsub(input, 1)), -100);
  Tensor loss = -(target * log_x + rsub(target, 1) * log_1mx);
  if (o.weight.defined()) loss = loss * o.weight;
  return reduce(loss, o.reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const BCEWithLogitsOptions& o) {
  check_reduction(o.reduction, "binary_cross_entropy_with_logits");
  check_same_shape(input, target, "binary_cross_entropy_with_logits");
  // log(1 + exp(-x)) = m + log(exp(-m) + exp(-x - m)) with m = max(-x, 0):
  // no exp ever overflows.
  Tensor m = clamp_min(-input, 0);
  Tensor softplus_neg = log(exp(-m) + exp(-input - m)) + m;
  Tensor loss;
  if (o.pos_weight.defined()) {
    Tensor log_weight = (o.pos_weight - 1) * target + 1;
    loss = rsub(target, 1) * input + log_weight * softplus_neg;
  } else {
    loss = rsub(target, 1) * input + softplus_neg;
  }
  if (o.weight.defined()) loss = loss * o.weight;
  return reduce(loss, o.reduction);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  check_reduction(reduction, "mse_loss");
  check_same_shape(input, target, "mse_loss");
  return reduce(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  check_reduction(reduction, "l1_loss");
  check_same_shape(input, target, "l1_loss");
  return reduce(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
  check_reduction(reduction, "smooth_l1_loss");
  check_same_shape(input, target, "smooth_l1_loss");
  EMBER_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got {}", beta);
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = input - target;
  Tensor z = abs(d);
  return reduce(where(lt(z, beta), square(d) * (0.5 / beta), z - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction, double delta) {
  check_reduction(reduction, "huber_loss");
  check_same_shape(input, target, "huber_loss");
  EMBER_CHECK(delta > 0, "huber_loss: delta must be positive, got {}", delta);
  Tensor d = input - target;
  Tensor z = abs(d);
  return reduce(where(lt(z, delta), square(d) * 0.5, (z - 0.5 * delta) * delta), reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivOptions& o) {
  check_reduction(o.reduction, "kl_div", true);
  Tensor loss;
  if (o.log_target) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(t, t) - t * x, with 0 log 0 = 0.
    Tensor log_t = log(where(gt(target, 0), target, ones({}, target.dtype())));
    loss = target * (log_t - input);
  }
  if (o.reduction == "batchmean") {
    EMBER_CHECK(input.dim() >= 1, "kl_div: reduction 'batchmean' needs a batch dim, got a 0-dim input");
    return sum(loss) / static_cast<double>(input.size(0));
  }
  return reduce(loss, o.reduction);
}

}  // namespace functional

// ---- modules ----

namespace {
CrossEntropyOptions with_weight(CrossEntropyOptions o, const Tensor& w) { o.weight = w; return o; }
NLLOptions with_weight(NLLOptions o, const Tensor& w) { o.weight = w; return o; }
BCEOptions with_weight(BCEOptions o, const Tensor& w) { o.weight = w; return o; }
}  // namespace

CrossEntropyLoss::CrossEntropyLoss(CrossEntropyOptions o)
    : Loss("CrossEntropyLoss"), options(std::move(o)), weight(register_buffer("weight", options.weight)) {
  functional::check_reduction(options.reduction, "CrossEntropyLoss");
}
Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, with_weight(options, weight));
}

NLLLoss::NLLLoss(NLLOptions o) : Loss("NLLLoss"), options(std::move(o)), weight(register_buffer("weight", options.weight)) {
  functional::check_reduction(options.reduction, "NLLLoss");
}
Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, with_weight(options, weight));
}

BCELoss::BCELoss(BCEOptions o) : Loss("BCELoss"), options(std::move(o)), weight(register_buffer("weight", options.weight)) {
  functional::check_reduction(options.reduction, "BCELoss");
}
Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, with_weight(options, weight));
}

BCEWithLogitsLoss::BCEWithLogitsLoss(BCEWithLogitsOptions o)
    : Loss("BCEWithLogitsLoss"),
      options(std::move(o)),
      weight(register_buffer("weight", options.weight)),
      pos_weight(register_buffer("pos_weight", options.pos_weight)) {
  functional::check_reduction(options.reduction, "BCEWithLogitsLoss");
}
Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  BCEWithLogitsOptions o = options;
  o.weight = weight;
  o.pos_weight = pos_weight;
  return functional::binary_cross_entropy_with_logits(input, target, o);
}

MSELoss::MSELoss(std::string r) : Loss("MSELoss"), reduction(std::move(r)) {
  functional::check_reduction(reduction, "MSELoss");
}
Tensor MSELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, reduction);
}

L1Loss::L1Loss(std::string r) : Loss("L1Loss"), reduction(std::move(r)) {
  functional::check_reduction(reduction, "L1Loss");
}
Tensor L1Loss::forward(const Tensor& input, const Tensor& target) { return functional::l1_loss(input, target, reduction); }

SmoothL1Loss::SmoothL1Loss(std::string r, double b) : Loss("SmoothL1Loss"), reduction(std::move(r)), beta(b) {
  functional::check_reduction(reduction, "SmoothL1Loss");
}
Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::smooth_l1_loss(input, target, reduction, beta);
}

HuberLoss::HuberLoss(std::string r, double d) : Loss("HuberLoss"), reduction(std::move(r)), delta(d) {
  functional::check_reduction(reduction, "HuberLoss");
}
Tensor HuberLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::huber_loss(input, target, reduction, delta);
}

KLDivLoss::KLDivLoss(KLDivOptions o) : Loss("KLDivLoss"), options(std::move(o)) {
  functional::check_reduction(options.reduction, "KLDivLoss", true);
}
Tensor KLDivLoss::forward(const Tensor& input, const Tensor& target) { return functional::kl_div(input, target, options); }

}  // namespace ember::nn

// Margin and embedding losses (torch.nn.functional names, ATen's formulas)
// as composites, and their modules.
#include "ember/nn/loss.h"

#include "ops/op_util.h"
#include "ember/ops/distance.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "nn/loss_util.h"

namespace ember::nn {
namespace functional {
namespace {

void check_float(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK_TYPE(t.is_floating_point(), "{}: expected a floating-point {}, got {}", op, what, to_string(t.dtype()));
}

// Stable log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
Tensor log_sigmoid(const Tensor& x) { return clamp_max(x, 0) - log1p(exp(-abs(x))); }

// Class-index targets of an (N, C) / (C) input: checked and as int64.
Tensor class_targets(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "{}: expected input (N, C) or (C), got shape {}", op,
              shape_str(input.sizes()));
  EMBER_CHECK_TYPE(target.dtype() == kInt64 || target.dtype() == kInt32,
                   "{}: expected class-index target of dtype int64, got {}", op, to_string(target.dtype()));
  EMBER_CHECK(target.dim() == input.dim() - 1 && (input.dim() == 1 || target.size(0) == input.size(0)),
              "{}: inconsistent target size: expected {} for input {}, got {}", op,
              input.dim() == 1 ? "[]" : fmt::format("[{}]", input.size(0)), shape_str(input.sizes()),
              shape_str(target.sizes()));
  Tensor t = target.to(kInt64);
  int64_t c = input.size(-1);
  if (t.numel() > 0) {
    int64_t lo = amin(t).item<int64_t>(), hi = amax(t).item<int64_t>();
    EMBER_CHECK_INDEX(lo >= 0 && hi < c, "{}: target {} is out of bounds for {} classes", op, lo < 0 ? lo : hi, c);
  }
  return t;
}

}  // namespace

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             const std::string& reduction) {
  const char* op = "cosine_embedding_loss";
  check_reduction(reduction, op);
  EMBER_CHECK(input1.sizes().vec() == input2.sizes().vec(),
              "{}: input1 and input2 must have the same shape, got {} and {}", op, shape_str(input1.sizes()),
              shape_str(input2.sizes()));
  EMBER_CHECK(input1.dim() >= 1 && input1.dim() <= 2 && target.dim() == input1.dim() - 1,
              "{}: {}D target tensor expects {}D input tensors, but found inputs with sizes {} and {}", op,
              target.dim(), target.dim() + 1, shape_str(input1.sizes()), shape_str(input2.sizes()));
  int64_t d = input1.dim() - 1;
  // ATen's formula: the squared norms get 1e-12 before the square root
  // (which makes integer inputs' exact sums floating point, as in PyTorch).
  Tensor prod = sum(input1 * input2, {d});
  Tensor mag1 = sum(input1 * input1, {d}) + 1e-12, mag2 = sum(input2 * input2, {d}) + 1e-12;
  Tensor cos = prod / sqrt(mag1 * mag2);
  Tensor zero = zeros_like(cos);
  Tensor loss = where(eq(target, 1), rsub(cos, 1), zero) + where(eq(target, -1), clamp_min(cos - margin, 0), zero);
  return reduce(loss, reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, const std::string& reduction) {
  const char* op = "hinge_embedding_loss";
  check_reduction(reduction, op);
  check_float(input, op, "input");
  Tensor zero = zeros_like(input);
  Tensor loss = where(ne(target, 1), clamp_min(rsub(input, margin), 0), zero) + where(ne(target, -1), input, zero);
  return reduce(loss, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           const std::string& reduction) {
  const char* op = "margin_ranking_loss";
  check_reduction(reduction, op);
  EMBER_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(),
              "{}: All input tensors should have same dimension but got sizes: input1: {}, input2: {}, target: {}",
              op, shape_str(input1.sizes()), shape_str(input2.sizes()), shape_str(target.sizes()));
  // Integer inputs become floating point at + margin, as in PyTorch.
  return reduce(clamp_min(-target * (input1 - input2) + margin, 0), reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginOptions& o) {
  const char* op = "multi_margin_loss";
  check_reduction(o.reduction, op);
  check_float(input, op, "input");
  EMBER_CHECK(o.p == 1 || o.p == 2, "{}: only p == 1 and p == 2 supported, got {}", op, o.p);
  Tensor t = class_targets(input, target, op);
  int64_t c = input.size(-1);
  EMBER_CHECK(!o.weight.defined() || (o.weight.dim() == 1 && o.weight.size(0) == c),
              "{}: expected weight of shape [{}] (one per class), got {}", op, c, shape_str(o.weight.sizes()));
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor tt = t.reshape({-1, 1});
  Tensor z = clamp_min(x - gather(x, 1, tt) + o.margin, 0);
  if (o.p == 2) z = square(z);
  // The target's own class is not a margin violation.
  z = z * logical_not(one_hot(tt.squeeze(1), c).to(kBool)).to(z.dtype());
  if (o.weight.defined()) z = z * index_select(o.weight.to(z.dtype()), 0, tt.squeeze(1)).unsqueeze(1);
  Tensor loss = sum(z, {1}) / static_cast<double>(c);
  if (input.dim() == 1) loss = loss.squeeze(0);
  return reduce(loss, o.reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  const char* op = "multilabel_margin_loss";
  check_reduction(reduction, op);
  check_float(input, op, "input");
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "{}: expected input (N, C) or (C), got shape {}", op,
              shape_str(input.sizes()));
  EMBER_CHECK(input.size(-1) > 0, "{}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
              op, shape_str(input.sizes()));
  EMBER_CHECK(target.sizes().vec() == input.sizes().vec(),
              "{}: inconsistent target size: {} for input of size: {}", op, shape_str(target.sizes()),
              shape_str(input.sizes()));
  EMBER_CHECK_TYPE(target.dtype() == kInt64, "{}: expected target of dtype int64, got {}", op,
                   to_string(target.dtype()));
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  int64_t n = x.size(0), c = x.size(1);
  // counts[i, j]: how often class j is listed before sample i's first -1.
  std::vector<int64_t> tv = target.reshape({-1}).to_vector<int64_t>();
  std::vector<double> counts(static_cast<size_t>(n * c), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k) {
      int64_t j = tv[i * c + k];
      if (j < 0) break;
      EMBER_CHECK_INDEX(j < c, "{}: target {} is out of bounds for {} classes", op, j, c);
      counts[i * c + j] += 1;
    }
  Tensor cnt = tensor<double>(counts, {n, c}, TensorOptions(kFloat64)).to(x.dtype());
  Tensor non_target = eq(cnt, 0.0).to(x.dtype());
  // hinge[i, j, k] = max(0, 1 - (x[i, j] - x[i, k])) for target j, non-target k.
  Tensor hinge = clamp_min(rsub(x.unsqueeze(2) - x.unsqueeze(1), 1), 0);
  Tensor loss = sum(hinge * cnt.unsqueeze(2) * non_target.unsqueeze(1), {1, 2}) / static_cast<double>(c);
  if (input.dim() == 1) loss = loss.squeeze(0);
  return reduce(loss, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const MultiLabelSoftMarginOptions& o) {
  const char* op = "multilabel_soft_margin_loss";
  check_reduction(o.reduction, op);
  check_float(input, op, "input");
  EMBER_CHECK(input.dim() >= 1, "{}: expected input (N, C) or (C), got a 0-dim tensor", op);
  Tensor loss = -(target * log_sigmoid(input) + rsub(target, 1) * log_sigmoid(-input));
  if (o.weight.defined()) loss = loss * o.weight;
  int64_t d = input.dim() - 1;
  loss = sum(loss, {d}) / static_cast<double>(input.size(d));
  return reduce(loss, o.reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  const char* op = "soft_margin_loss";
  check_reduction(reduction, op);
  check_float(input, op, "input");
  return reduce(log1p(exp(-input * target)), reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginOptions& o) {
  const char* op = "triplet_margin_loss";
  check_reduction(o.reduction, op);
  EMBER_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(),
              "{}: The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
              "but got: anchor {}D, positive {}D, and negative {}D inputs",
              op, anchor.dim(), positive.dim(), negative.dim());
  EMBER_CHECK(o.margin > 0, "{}: margin must be greater than 0, got {}", op, o.margin);
  Tensor dpos = pairwise_distance(anchor, positive, o.p, o.eps);
  Tensor dneg = pairwise_distance(anchor, negative, o.p, o.eps);
  if (o.swap) dneg = minimum(dneg, pairwise_distance(positive, negative, o.p, o.eps));
  return reduce(clamp_min(dpos - dneg + o.margin, 0), o.reduction);
}

}  // namespace functional

// ---- modules ----

HingeEmbeddingLoss::HingeEmbeddingLoss(double m, std::string r)
    : Loss("HingeEmbeddingLoss"), margin(m), reduction(std::move(r)) {
  functional::check_reduction(reduction, "HingeEmbeddingLoss");
}
Tensor HingeEmbeddingLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::hinge_embedding_loss(input, target, margin, reduction);
}

MultiMarginLoss::MultiMarginLoss(MultiMarginOptions o)
    : Loss("MultiMarginLoss"), options(std::move(o)), weight(register_buffer("weight", options.weight)) {
  functional::check_reduction(options.reduction, "MultiMarginLoss");
  EMBER_CHECK(options.p == 1 || options.p == 2, "MultiMarginLoss: only p == 1 and p == 2 supported, got {}", options.p);
}
Tensor MultiMarginLoss::forward(const Tensor& input, const Tensor& target) {
  MultiMarginOptions o = options;
  o.weight = weight;
  return functional::multi_margin_loss(input, target, o);
}

MultiLabelMarginLoss::MultiLabelMarginLoss(std::string r) : Loss("MultiLabelMarginLoss"), reduction(std::move(r)) {
  functional::check_reduction(reduction, "MultiLabelMarginLoss");
}
Tensor MultiLabelMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::multilabel_margin_loss(input, target, reduction);
}

MultiLabelSoftMarginLoss::MultiLabelSoftMarginLoss(MultiLabelSoftMarginOptions o)
    : Loss("MultiLabelSoftMarginLoss"), options(std::move(o)), weight(register_buffer("weight", options.weight)) {
  functional::check_reduction(options.reduction, "MultiLabelSoftMarginLoss");
}
Tensor MultiLabelSoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  MultiLabelSoftMarginOptions o = options;
  o.weight = weight;
  return functional::multilabel_soft_margin_loss(input, target, o);
}

SoftMarginLoss::SoftMarginLoss(std::string r) : Loss("SoftMarginLoss"), reduction(std::move(r)) {
  functional::check_reduction(reduction, "SoftMarginLoss");
}
Tensor SoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::soft_margin_loss(input, target, reduction);
}

CosineEmbeddingLoss::CosineEmbeddingLoss(double m, std::string r)
    : ThreeInputLoss("CosineEmbeddingLoss"), margin(m), reduction(std::move(r)) {
  functional::check_reduction(reduction, "CosineEmbeddingLoss");
}
Tensor CosineEmbeddingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return functional::cosine_embedding_loss(input1, input2, target, margin, reduction);
}

MarginRankingLoss::MarginRankingLoss(double m, std::string r)
    : ThreeInputLoss("MarginRankingLoss"), margin(m), reduction(std::move(r)) {
  functional::check_reduction(reduction, "MarginRankingLoss");
}
Tensor MarginRankingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return functional::margin_ranking_loss(input1, input2, target, margin, reduction);
}

TripletMarginLoss::TripletMarginLoss(TripletMarginOptions o) : ThreeInputLoss("TripletMarginLoss"), options(std::move(o)) {
  functional::check_reduction(options.reduction, "TripletMarginLoss");
}
Tensor TripletMarginLoss::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return functional::triplet_margin_loss(anchor, positive, negative, options);
}

}  // namespace ember::nn

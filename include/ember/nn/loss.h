// Loss functions (torch.nn.functional names) and their modules
// (torch.nn.CrossEntropyLoss & co.). reduction is "none", "mean" or "sum"
// ("batchmean" too for kl_div). All are composites of differentiable ops and
// numerically stable: log-softmax / log-sum-exp, never log(softmax).
#pragma once

#include <string>

#include "ember/nn/module.h"

namespace ember::nn {

struct CrossEntropyOptions {
  Tensor weight{};               // per-class weights [C], optional
  int64_t ignore_index = -100; // class-index targets equal to it count for nothing
  std::string reduction = "mean";
  double label_smoothing = 0;  // in [0, 1]
};
struct NLLOptions {
  Tensor weight{};
  int64_t ignore_index = -100;
  std::string reduction = "mean";
};
struct BCEOptions {
  Tensor weight{};  // broadcast against the input
  std::string reduction = "mean";
};
struct BCEWithLogitsOptions {
  Tensor weight{};
  Tensor pos_weight{};  // weight of positive examples, broadcast over the last (class) dim
  std::string reduction = "mean";
};
struct KLDivOptions {
  std::string reduction = "mean";  // "batchmean" divides the sum by the batch size
  bool log_target = false;
};
struct MultiMarginOptions {
  int64_t p = 1;  // 1 or 2
  double margin = 1.0;
  Tensor weight{};  // per-class weights [C], optional
  std::string reduction = "mean";
};
struct MultiLabelSoftMarginOptions {
  Tensor weight{};  // per-class weights [C], optional
  std::string reduction = "mean";
};
struct TripletMarginOptions {
  double margin = 1.0;
  double p = 2;
  double eps = 1e-6;
  bool swap = false;  // also use the positive-negative distance when smaller
  std::string reduction = "mean";
};
struct PoissonNLLOptions {
  bool log_input = true;  // input is log(rate): exp(input) - target * input
  bool full = false;      // add Stirling's approximation of log(target!)
  double eps = 1e-8;      // log(input + eps) when !log_input
  std::string reduction = "mean";
};
struct GaussianNLLOptions {
  bool full = false;  // add 0.5 log(2 pi)
  double eps = 1e-6;  // var is clamped at eps (the gradient passes the clamp)
  std::string reduction = "mean";
};
struct CTCOptions {
  int64_t blank = 0;
  std::string reduction = "mean";  // "mean" divides each loss by its target length first
  bool zero_infinity = false;      // infinite losses (impossible alignments) become 0
};

namespace functional {
// input logits (N, C, *) or (C); target class indices (N, *) / () (int64),
// or class probabilities shaped like input. With weights, "mean" divides by
// the summed weights of the non-ignored targets (PyTorch's weighted mean).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options = {});
// input log-probabilities (N, C, *) or (C); target class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLOptions& options = {});
// input probabilities in [0, 1]; log terms are clamped at -100 like PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BCEOptions& options = {});
// input logits; stable for any magnitude.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (beta = 0: L1).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                      double beta = 1.0);
// 0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere.
Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                  double delta = 1.0);
// input log-probabilities; target probabilities (or log-probabilities when
// log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivOptions& options = {});

// ---- margin and embedding losses (src/nn/loss_margin.cpp) ----
// x1, x2 (N, D) or (D); target (N) or () of 1 / -1: 1 - cos for 1,
// max(0, cos - margin) for -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0,
                             const std::string& reduction = "mean");
// x where target is 1, max(0, margin - x) where it is -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            const std::string& reduction = "mean");
// max(0, -target * (x1 - x2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0,
                           const std::string& reduction = "mean");
// input (N, C) or (C), target class indices (N) or (): sum over i != y of
// max(0, margin - x[y] + x[i])^p (times weight[y]) / C.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginOptions& options = {});
// input (N, C) or (C); target int64 of the same shape holding class indices,
// ended by the first -1: sum over targets j and non-targets i of
// max(0, 1 - (x[j] - x[i])) / C.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
// Binary cross-entropy with logits per class, averaged over classes: (N).
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultiLabelSoftMarginOptions& options = {});
// log(1 + exp(-target * input)).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
// max(0, d(a, p) - d(a, n) + margin) with pairwise_distance d.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginOptions& options = {});

// ---- likelihood losses (src/nn/loss_likelihood.cpp) ----
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLOptions& options = {});
// 0.5 (log(var) + (input - target)^2 / var); var like input, or input's
// shape without (or with size 1 in) the last dim.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         const GaussianNLLOptions& options = {});
// log_probs (T, N, C) or (T, C); targets (N, S) padded or 1-D concatenated;
// input_lengths and target_lengths (N) int64 tensors. The negative log
// likelihood of all alignments (forward algorithm in log space).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCOptions& options = {});
}  // namespace functional

// Loss modules: forward(input, target). Class weights are registered as
// buffers named "weight" / "pos_weight", as in PyTorch.
class Loss : public Module {
 public:
  using Module::Module;
  using Module::forward;
  virtual Tensor forward(const Tensor& input, const Tensor& target) = 0;
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
};

class CrossEntropyLoss : public Loss {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  CrossEntropyOptions options;
  Tensor& weight;  // the registered buffer (options.weight is its initial value)
};

class NLLLoss : public Loss {
 public:
  explicit NLLLoss(NLLOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  NLLOptions options;
  Tensor& weight;  // the registered buffer (options.weight is its initial value)
};

class BCELoss : public Loss {
 public:
  explicit BCELoss(BCEOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  BCEOptions options;
  Tensor& weight;  // the registered buffer (options.weight is its initial value)
};

class BCEWithLogitsLoss : public Loss {
 public:
  explicit BCEWithLogitsLoss(BCEWithLogitsOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  BCEWithLogitsOptions options;
  Tensor& weight;
  Tensor& pos_weight;
};

class MSELoss : public Loss {
 public:
  explicit MSELoss(std::string reduction = "mean");
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
};

class L1Loss : public Loss {
 public:
  explicit L1Loss(std::string reduction = "mean");
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
};

class SmoothL1Loss : public Loss {
 public:
  explicit SmoothL1Loss(std::string reduction = "mean", double beta = 1.0);
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
  double beta;
};

class HuberLoss : public Loss {
 public:
  explicit HuberLoss(std::string reduction = "mean", double delta = 1.0);
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
  double delta;
};

class KLDivLoss : public Loss {
 public:
  explicit KLDivLoss(KLDivOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  KLDivOptions options;
};

class HingeEmbeddingLoss : public Loss {
 public:
  explicit HingeEmbeddingLoss(double margin = 1.0, std::string reduction = "mean");
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  double margin;
  std::string reduction;
};

class MultiMarginLoss : public Loss {
 public:
  explicit MultiMarginLoss(MultiMarginOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  MultiMarginOptions options;
  Tensor& weight;  // the registered buffer
};

class MultiLabelMarginLoss : public Loss {
 public:
  explicit MultiLabelMarginLoss(std::string reduction = "mean");
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
};

class MultiLabelSoftMarginLoss : public Loss {
 public:
  explicit MultiLabelSoftMarginLoss(MultiLabelSoftMarginOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  MultiLabelSoftMarginOptions options;
  Tensor& weight;  // the registered buffer
};

class SoftMarginLoss : public Loss {
 public:
  explicit SoftMarginLoss(std::string reduction = "mean");
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string reduction;
};

class PoissonNLLLoss : public Loss {
 public:
  explicit PoissonNLLLoss(PoissonNLLOptions options = {});
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  PoissonNLLOptions options;
};

// Losses over three tensors: forward(a, b, c) and operator().
class ThreeInputLoss : public Module {
 public:
  using Module::Module;
  using Module::forward;
  virtual Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) = 0;
  Tensor operator()(const Tensor& a, const Tensor& b, const Tensor& c) { return forward(a, b, c); }
};

// forward(input1, input2, target).
class CosineEmbeddingLoss : public ThreeInputLoss {
 public:
  explicit CosineEmbeddingLoss(double margin = 0, std::string reduction = "mean");
  using ThreeInputLoss::forward;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) override;
  double margin;
  std::string reduction;
};

// forward(input1, input2, target).
class MarginRankingLoss : public ThreeInputLoss {
 public:
  explicit MarginRankingLoss(double margin = 0, std::string reduction = "mean");
  using ThreeInputLoss::forward;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) override;
  double margin;
  std::string reduction;
};

// forward(anchor, positive, negative).
class TripletMarginLoss : public ThreeInputLoss {
 public:
  explicit TripletMarginLoss(TripletMarginOptions options = {});
  using ThreeInputLoss::forward;
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) override;
  TripletMarginOptions options;
};

// forward(input, target, var).
class GaussianNLLLoss : public ThreeInputLoss {
 public:
  explicit GaussianNLLLoss(GaussianNLLOptions options = {});
  using ThreeInputLoss::forward;
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var) override;
  GaussianNLLOptions options;
};

// forward(log_probs, targets, input_lengths, target_lengths).
class CTCLoss : public Module {
 public:
  explicit CTCLoss(CTCOptions options = {});
  using Module::forward;
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  Tensor operator()(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                    const Tensor& target_lengths) {
    return forward(log_probs, targets, input_lengths, target_lengths);
  }
  CTCOptions options;
};

}  // namespace ember::nn

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

}  // namespace ember::nn

// Adam (with AMSGrad) and AdamW, its decoupled-weight-decay variant
// (torch.optim.Adam / AdamW, PyTorch 1.13's update and bias correction).
#pragma once

#include <concepts>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;  // PyTorch's betas[0]
  double beta2 = 0.999;  // PyTorch's betas[1]
  double eps = 1e-8;
  double weight_decay = 0;  // AdamW's default is 1e-2
  bool amsgrad = false;
  bool maximize = false;

  OptionMap to_map() const;
  static AdamOptions from_map(const OptionMap& options, const char* optimizer = "Adam");
};

// One parameter's Adam state; max_exp_avg_sq only with amsgrad.
struct AdamState {
  Tensor step;  // 0-dim float32 count of updates so far
  Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;

  // Zero state for `param` (what the first step creates).
  static AdamState init(const Tensor& param, bool amsgrad);
  static AdamState from(const ParamState& state);
  void store(ParamState& state) const;
};

// One Adam update of one parameter, in place. With decoupled_weight_decay
// (AdamW) the parameter decays by lr * weight_decay instead of the gradient
// gaining weight_decay * param.
void adam_update(const Tensor& param, const Tensor& grad, AdamState& s, const AdamOptions& o,
                 bool decoupled_weight_decay = false);

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = {}) : Adam(single_group(std::move(params)), defaults) {}
  // optim::Adam(model->parameters(), 1e-3), as torch.optim.Adam(params, lr).
  // A template so that Adam(params, {}) still means the default options.
  template <std::floating_point Lr>
  Adam(std::vector<Tensor> params, Lr lr) : Adam(std::move(params), AdamOptions{.lr = static_cast<double>(lr)}) {}
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults = {});
  const char* name() const override { return decoupled_ ? "AdamW" : "Adam"; }

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults, bool decoupled);
  void step_group(ParamGroup& group) override;

 private:
  bool decoupled_ = false;
};

// AdamW's options: Adam's, but weight_decay defaults to 1e-2. A separate
// aggregate so designated initializers work ({.lr = 1e-3, .amsgrad = true}).
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;

  AdamOptions adam() const { return {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize}; }
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {})
      : AdamW(single_group(std::move(params)), defaults) {}
  template <std::floating_point Lr>
  AdamW(std::vector<Tensor> params, Lr lr) : AdamW(std::move(params), AdamWOptions{.lr = static_cast<double>(lr)}) {}
  AdamW(std::vector<ParamGroup> groups, AdamWOptions defaults = {}) : Adam(std::move(groups), defaults.adam(), true) {}
};

}  // namespace ember::optim

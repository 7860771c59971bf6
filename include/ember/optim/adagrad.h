// Adagrad with learning-rate decay (torch.optim.Adagrad, PyTorch 1.13's
// update; dense gradients only).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0;
  double weight_decay = 0;
  double initial_accumulator_value = 0;
  double eps = 1e-10;
  bool maximize = false;

  OptionMap to_map() const;
  static AdagradOptions from_map(const OptionMap& options);
};

struct AdagradState {
  Tensor step;  // 0-dim float32 count of updates so far
  Tensor sum;   // running sum of squared gradients

  static AdagradState init(const Tensor& param, const AdagradOptions& o);
  static AdagradState from(const ParamState& state);
  void store(ParamState& state) const;
};

// One Adagrad update of one parameter, in place.
void adagrad_update(const Tensor& param, const Tensor& grad, AdagradState& s, const AdagradOptions& o);

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(single_group(std::move(params)), defaults) {}
  // Creates every parameter's state at once, like PyTorch (so state_dict()
  // before the first step already holds the accumulators).
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions defaults = {});
  const char* name() const override { return "Adagrad"; }

 protected:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim

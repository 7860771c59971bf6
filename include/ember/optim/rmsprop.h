// RMSprop with optional momentum and centering (torch.optim.RMSprop,
// PyTorch 1.13's update).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
  bool maximize = false;

  OptionMap to_map() const;
  static RMSpropOptions from_map(const OptionMap& options);
};

// One parameter's RMSprop state; momentum_buffer only with momentum > 0,
// grad_avg only when centered.
struct RMSpropState {
  Tensor step;  // 0-dim float32 count of updates so far
  Tensor square_avg, momentum_buffer, grad_avg;

  static RMSpropState init(const Tensor& param, const RMSpropOptions& o);
  static RMSpropState from(const ParamState& state);
  void store(ParamState& state) const;
};

// One RMSprop update of one parameter, in place.
void rmsprop_update(const Tensor& param, const Tensor& grad, RMSpropState& s, const RMSpropOptions& o);

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(single_group(std::move(params)), defaults) {}
  RMSprop(std::vector<ParamGroup> groups, RMSpropOptions defaults = {});
  const char* name() const override { return "RMSprop"; }

 protected:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim

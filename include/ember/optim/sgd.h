// Stochastic gradient descent with momentum, dampening, Nesterov momentum and
// L2 weight decay (torch.optim.SGD, PyTorch 1.13's update).
#pragma once

#include <concepts>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions {
  double lr = kRequired;  // PyTorch 1.13's SGD has no default learning rate
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;

  OptionMap to_map() const;
  static SGDOptions from_map(const OptionMap& options);
};

// One SGD update of one parameter, in place. momentum_buffer is created from
// the gradient on the first step with momentum != 0.
void sgd_update(const Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const SGDOptions& o);

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults) : SGD(single_group(std::move(params)), defaults) {}
  // optim::SGD(model->parameters(), 0.1), as torch.optim.SGD(params, lr).
  template <std::floating_point Lr>
  SGD(std::vector<Tensor> params, Lr lr) : SGD(std::move(params), SGDOptions{.lr = static_cast<double>(lr)}) {}
  SGD(std::vector<ParamGroup> groups, SGDOptions defaults);
  const char* name() const override { return "SGD"; }

 protected:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim

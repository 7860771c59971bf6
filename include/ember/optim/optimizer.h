// optim::Optimizer: param groups with per-group options, per-parameter state,
// and a state_dict that lets a resumed run continue exactly (torch.optim.Optimizer).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::optim {

// A group's options by name, like the dict PyTorch keeps per group ("lr",
// "momentum", "beta1", ...). Booleans are 0/1. Schedulers add their own keys
// ("initial_lr", "max_lr"); every value is a number so the map is JSON-able.
using OptionMap = std::map<std::string, double>;

// An option a group must provide because the optimizer has no default for it
// (PyTorch's `required`, e.g. SGD's lr).
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

// Parameters that share options. Options left out take the optimizer's
// defaults when the group is added.
struct ParamGroup {
  std::vector<Tensor> params;
  OptionMap options;

  // The option `key`; raises naming the key when the group lacks it.
  double get(const std::string& key) const;
  bool get_bool(const std::string& key) const { return get(key) != 0.0; }
  bool has(const std::string& key) const { return options.count(key) != 0; }
  double lr() const { return get("lr"); }
  void set_lr(double lr) { options["lr"] = lr; }
};

// One parameter's state by name ("step", "exp_avg", "momentum_buffer", ...).
using ParamState = std::map<std::string, Tensor>;

// A group in a state dict: its options and the indices of its parameters.
struct ParamGroupState {
  OptionMap options;
  std::vector<int64_t> params;
};

// Snapshot of an optimizer (torch's optimizer.state_dict()): state per
// parameter index (indices count through the groups in order) and the groups'
// options. Tensors are copies, so stepping on does not change a snapshot.
struct OptimizerStateDict {
  std::map<int64_t, ParamState> state;
  std::vector<ParamGroupState> param_groups;

  // Flat form for a safetensors checkpoint: tensors named
  // "<prefix>state.<i>.<name>" and metadata "<prefix>param_groups.<g>.<option>"
  // plus "<prefix>param_groups.<g>.num_params".
  std::map<std::string, Tensor> tensors(const std::string& prefix = "") const;
  OptionMap metadata(const std::string& prefix = "") const;
  // Inverse of tensors() + metadata(); keys without the prefix are ignored.
  static OptimizerStateDict from_flat(const std::map<std::string, Tensor>& tensors,
                                      const OptionMap& metadata, const std::string& prefix = "");
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The class name, for messages ("Adam").
  virtual const char* name() const = 0;

  // Adds a group; missing options take the defaults. A parameter may belong
  // to one group only, and must be a floating-point leaf.
  void add_param_group(ParamGroup group);

  // Clears every parameter's gradient: drops it (set_to_none) or zeroes it
  // in place. PyTorch 1.13 defaults to zeroing; Ember follows PyTorch 2.x.
  void zero_grad(bool set_to_none = true);

  // One update of every parameter that has a gradient, in place and without
  // recording autograd history. The closure, when given, recomputes the loss
  // (with grad enabled) before the update; its result is returned.
  Tensor step(const LossClosure& closure = {});

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const OptionMap& defaults() const { return defaults_; }

  // The state of `param`, created empty on first use.
  ParamState& state(const Tensor& param);
  // The state of `param`, or null when it has none yet.
  const ParamState* find_state(const Tensor& param) const;

  OptimizerStateDict state_dict() const;
  // Restores groups' options and per-parameter state from a snapshot of an
  // optimizer with the same group sizes; state is cast to each parameter's
  // dtype (except "step") and copied, so the snapshot stays independent.
  void load_state_dict(const OptimizerStateDict& state_dict);

 protected:
  // Adds `groups` after checking `defaults` (NaN marks a required option).
  Optimizer(std::vector<ParamGroup> groups, OptionMap defaults);

  // Updates every parameter of one group; runs under NoGradGuard.
  virtual void step_group(ParamGroup& group) = 0;

 private:
  std::vector<ParamGroup> groups_;
  OptionMap defaults_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

// Wraps a plain parameter list as one group with the default options.
inline std::vector<ParamGroup> single_group(std::vector<Tensor> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

}  // namespace ember::optim

// optim::Optimizer: groups, state and state_dict shared by every optimizer.
#include "ember/optim/optimizer.h"

#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_set>

#include "core/adaptive_threads.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::optim {

double ParamGroup::get(const std::string& key) const {
  auto it = options.find(key);
  EMBER_CHECK(it != options.end(), "param group has no option '{}'; known options: {}", key,
              [&] {
                std::vector<std::string> keys;
                for (const auto& kv : options) keys.push_back(kv.first);
                return fmt::format("{}", fmt::join(keys, ", "));
              }());
  return it->second;
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, OptionMap defaults) : defaults_(std::move(defaults)) {
  EMBER_CHECK(!groups.empty() && !(groups.size() == 1 && groups[0].params.empty()),
              "optimizer got an empty parameter list");
  for (auto& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  EMBER_CHECK(!group.params.empty(), "optimizer got a param group with no parameters");
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params) seen.insert(p.impl());
  for (const auto& p : group.params) {
    EMBER_CHECK(p.defined(), "optimizer got an undefined tensor as a parameter");
    EMBER_CHECK(p.is_floating_point(), "optimizer can only optimize floating-point tensors, got dtype {}",
                to_string(p.dtype()));
    EMBER_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor; optimize the tensor it was computed from, "
                             "or detach() it and call requires_grad_()");
    EMBER_CHECK(seen.insert(p.impl()).second,
                "some parameters appear in more than one parameter group (shape {})", p.sizes().vec());
  }
  for (const auto& [key, value] : defaults_) {
    auto it = group.options.find(key);
    if (it == group.options.end()) {
      EMBER_CHECK(!std::isnan(value),
                  "parameter group didn't specify a value of required optimization parameter {}", key);
      group.options.emplace(key, value);
    }
  }
  groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& g : groups_) {
    for (auto& p : g.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        // A grad with history (create_graph) is cut loose before zeroing, like PyTorch.
        if (grad.grad_fn()) {
          grad = grad.detach();
          p.set_grad(grad);
        }
        grad.zero_();
      }
    }
  }
}

Tensor Optimizer::step(const LossClosure& closure) {
  detail::adapt_thread_count(true);  // between kernels: the thread count may rise here
  Tensor loss;
  if (closure) {
    EnableGradGuard enable;
    loss = closure();
  }
  NoGradGuard no_grad;
  for (auto& g : groups_) step_group(g);
  return loss;
}

ParamState& Optimizer::state(const Tensor& param) { return state_[param.impl()]; }

const ParamState* Optimizer::find_state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict sd;
  int64_t index = 0;
  for (const auto& g : groups_) {
    ParamGroupState gs;
    gs.options = g.options;
    for (const auto& p : g.params) {
      if (const ParamState* st = find_state(p); st && !st->empty()) {
        ParamState copy;
        for (const auto& [k, t] : *st) copy.emplace(k, t.defined() ? t.detach().clone() : t);
        sd.state.emplace(index, std::move(copy));
      }
      gs.params.push_back(index++);
    }
    sd.param_groups.push_back(std::move(gs));
  }
  return sd;
}

void Optimizer::load_state_dict(const OptimizerStateDict& sd) {
  EMBER_CHECK(sd.param_groups.size() == groups_.size(),
              "{}: loaded state dict has {} parameter groups, but the optimizer has {}", name(),
              sd.param_groups.size(), groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    EMBER_CHECK(sd.param_groups[g].params.size() == groups_[g].params.size(),
                "{}: loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                "group: group {} has {} parameters in the state dict and {} in the optimizer",
                name(), g, sd.param_groups[g].params.size(), groups_[g].params.size());
  }
  NoGradGuard no_grad;
  std::unordered_map<const TensorImpl*, ParamState> new_state;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroupState& gs = sd.param_groups[g];
    for (size_t i = 0; i < gs.params.size(); ++i) {
      const Tensor& p = groups_[g].params[i];
      auto it = sd.state.find(gs.params[i]);
      if (it == sd.state.end()) continue;
      ParamState st;
      for (const auto& [key, t] : it->second) {
        if (!t.defined()) continue;
        Tensor v = t.detach();
        if (key == "step") {
          // Steps stay float32 scalars whatever the parameter dtype (PyTorch keeps step's dtype).
          v = v.to(kFloat32, /*copy=*/true).reshape({});
        } else {
          EMBER_CHECK(v.sizes().vec() == p.sizes().vec(),
                      "{}: state '{}' of parameter {} has shape {}, but the parameter has shape {}", name(), key,
                      gs.params[i], v.sizes().vec(), p.sizes().vec());
          v = v.is_floating_point() ? v.to(p.dtype(), /*copy=*/true).contiguous() : v.clone();
        }
        st.emplace(key, std::move(v));
      }
      new_state.emplace(p.impl(), std::move(st));
    }
    // Saved options win; keys the optimizer has but the snapshot lacks stay.
    for (const auto& [key, value] : gs.options) groups_[g].options[key] = value;
  }
  state_ = std::move(new_state);
}

// ---- flat form ----

std::map<std::string, Tensor> OptimizerStateDict::tensors(const std::string& prefix) const {
  std::map<std::string, Tensor> out;
  for (const auto& [index, st] : state)
    for (const auto& [key, t] : st)
      if (t.defined()) out.emplace(fmt::format("{}state.{}.{}", prefix, index, key), t);
  return out;
}

OptionMap OptimizerStateDict::metadata(const std::string& prefix) const {
  OptionMap out;
  for (size_t g = 0; g < param_groups.size(); ++g) {
    for (const auto& [key, value] : param_groups[g].options)
      out.emplace(fmt::format("{}param_groups.{}.{}", prefix, g, key), value);
    out.emplace(fmt::format("{}param_groups.{}.num_params", prefix, g),
                static_cast<double>(param_groups[g].params.size()));
  }
  return out;
}

namespace {

// A flat-form state dict is untrusted input (a checkpoint file): no
// optimizer has anywhere near this many parameter tensors, and the bound keeps
// a 4 KB file from asking for gigabytes through num_params.
constexpr int64_t kMaxFlatParams = int64_t{1} << 20;

// The decimal index that starts `rest` (up to the first '.'), or an error
// naming the key; never a bare "stoul".
int64_t flat_index(std::string_view digits, const std::string& key, const char* what) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  EMBER_CHECK(!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && v >= 0,
              "optimizer state: key '{}': {} '{}' is not a non-negative integer", key, what, digits);
  return v;
}

}  // namespace

OptimizerStateDict OptimizerStateDict::from_flat(const std::map<std::string, Tensor>& tensors,
                                                 const OptionMap& metadata, const std::string& prefix) {
  OptimizerStateDict sd;
  const std::string groups_prefix = prefix + "param_groups.";
  // Groups are numbered densely from 0 and each has entries, so a valid group
  // index is below the number of group entries; bounding it before resizing
  // keeps "param_groups.99999999999.lr" from allocating.
  size_t group_entries = 0;
  for (const auto& [name, value] : metadata) group_entries += name.rfind(groups_prefix, 0) == 0;
  int64_t total_params = 0;
  for (const auto& [name, value] : metadata) {
    if (name.rfind(groups_prefix, 0) != 0) continue;
    std::string rest = name.substr(groups_prefix.size());
    size_t dot = rest.find('.');
    EMBER_CHECK(dot != std::string::npos, "optimizer metadata key '{}' should be {}param_groups.<group>.<option>",
                name, prefix);
    const int64_t gi = flat_index(std::string_view(rest).substr(0, dot), name, "group index");
    EMBER_CHECK(static_cast<uint64_t>(gi) < group_entries,
                "optimizer state: key '{}': group index {} is out of range; the metadata describes at most {} "
                "groups", name, gi, group_entries);
    const size_t g = static_cast<size_t>(gi);
    if (sd.param_groups.size() <= g) sd.param_groups.resize(g + 1);
    std::string key = rest.substr(dot + 1);
    if (key == "num_params") {
      EMBER_CHECK(std::isfinite(value) && value >= 0 && value == std::floor(value) &&
                      value <= static_cast<double>(kMaxFlatParams - total_params),
                  "optimizer state: key '{}' = {} is not a parameter count (a whole number in [0, {}] in total "
                  "over the groups)", name, value, kMaxFlatParams);
      sd.param_groups[g].params.resize(static_cast<size_t>(value));
      total_params += static_cast<int64_t>(value);
    } else {
      sd.param_groups[g].options[key] = value;
    }
  }
  // Parameter indices count through the groups in order, as state_dict() numbers them.
  int64_t index = 0;
  for (auto& gs : sd.param_groups)
    for (auto& i : gs.params) i = index++;
  const std::string state_prefix = prefix + "state.";
  for (const auto& [name, t] : tensors) {
    if (name.rfind(state_prefix, 0) != 0) continue;
    std::string rest = name.substr(state_prefix.size());
    size_t dot = rest.find('.');
    EMBER_CHECK(dot != std::string::npos, "optimizer tensor '{}' should be named {}state.<index>.<name>", name,
                prefix);
    int64_t i = flat_index(std::string_view(rest).substr(0, dot), name, "parameter index");
    EMBER_CHECK(i < index, "optimizer tensor '{}' names parameter {}, but the groups hold {} parameters",
                name, i, index);
    sd.state[i][rest.substr(dot + 1)] = t;
  }
  return sd;
}

}  // namespace ember::optim

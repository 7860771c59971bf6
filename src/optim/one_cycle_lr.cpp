// OneCycleLR (PyTorch 1.13's phases and annealing functions).
#include "ember/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

namespace ember::optim {

namespace {
// A per-group list from one value or one value per group.
std::vector<double> per_group(const std::vector<double>& v, size_t groups, const char* what) {
  EMBER_CHECK(v.size() == 1 || v.size() == groups, "OneCycleLR: expected 1 or {} values for {}, got {}", groups,
              what, v.size());
  return v.size() == 1 ? std::vector<double>(groups, v[0]) : v;
}
}  // namespace

// The base constructor runs first and needs initial_lr, so the group keys are
// written by this helper, called while building the base.
static Optimizer& prepare_groups(Optimizer& optimizer, const OneCycleLROptions& o) {
  auto& groups = optimizer.param_groups();
  const std::vector<double> max_lrs = per_group(o.max_lr, groups.size(), "max_lr");
  if (o.last_epoch == -1) {
    for (size_t i = 0; i < groups.size(); ++i) {
      auto& opts = groups[i].options;
      opts["initial_lr"] = max_lrs[i] / o.div_factor;
      opts["max_lr"] = max_lrs[i];
      opts["min_lr"] = opts["initial_lr"] / o.final_div_factor;
    }
  }
  if (o.cycle_momentum) {
    const bool has_momentum = optimizer.defaults().count("momentum") != 0;
    const bool has_beta1 = optimizer.defaults().count("beta1") != 0;
    EMBER_CHECK(has_momentum || has_beta1,
                "OneCycleLR: optimizer {} must support momentum (momentum or betas) with `cycle_momentum` enabled; "
                "pass cycle_momentum = false",
                optimizer.name());
    const std::vector<double> max_m = per_group(o.max_momentum, groups.size(), "max_momentum");
    const std::vector<double> base_m = per_group(o.base_momentum, groups.size(), "base_momentum");
    if (o.last_epoch == -1) {
      for (size_t i = 0; i < groups.size(); ++i) {
        auto& opts = groups[i].options;
        opts[has_beta1 ? "beta1" : "momentum"] = max_m[i];
        opts["max_momentum"] = max_m[i];
        opts["base_momentum"] = base_m[i];
      }
    }
  }
  return optimizer;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleLROptions o)
    : LRScheduler(prepare_groups(optimizer, o), o.last_epoch), options_(std::move(o)) {
  const auto& opt = options_;
  if (opt.total_steps > 0) {
    total_steps_ = opt.total_steps;
  } else {
    EMBER_CHECK(opt.epochs > 0 && opt.steps_per_epoch > 0,
                "OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch), got total_steps "
                "{}, epochs {}, steps_per_epoch {}",
                opt.total_steps, opt.epochs, opt.steps_per_epoch);
    total_steps_ = opt.epochs * opt.steps_per_epoch;
  }
  EMBER_CHECK(opt.pct_start >= 0 && opt.pct_start <= 1, "OneCycleLR: expected pct_start between 0 and 1, got {}",
              opt.pct_start);
  EMBER_CHECK(opt.anneal_strategy == "cos" || opt.anneal_strategy == "linear",
              "OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got '{}'", opt.anneal_strategy);
  const double total = static_cast<double>(total_steps_);
  if (opt.three_phase) {
    phases_ = {{opt.pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {2 * opt.pct_start * total - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
               {total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
  } else {
    phases_ = {{opt.pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
               {total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
  }
  use_beta1_ = optimizer.defaults().count("beta1") != 0;
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy == "cos") {
    const double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  const int64_t step_num = last_epoch_;
  EMBER_CHECK(step_num <= total_steps_,
              "OneCycleLR: tried to step {} times. The specified number of total steps is {}", step_num + 1,
              total_steps_);
  std::vector<double> lrs;
  for (ParamGroup& group : optimizer_->param_groups()) {
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (static_cast<double>(step_num) <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (static_cast<double>(step_num) - start_step) / (ph.end_step - start_step);
        lr = anneal(group.get(ph.start_lr), group.get(ph.end_lr), pct);
        if (options_.cycle_momentum) momentum = anneal(group.get(ph.start_momentum), group.get(ph.end_momentum), pct);
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    if (options_.cycle_momentum) group.options[use_beta1_ ? "beta1" : "momentum"] = momentum;
  }
  return lrs;
}

}  // namespace ember::optim

#include "ember/train/optim_setup.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ember/optim.h"

namespace ember::train {

using namespace ember::optim;

namespace {

std::vector<ParamGroup> param_groups(const Config& c, nn::Module& model) {
  std::vector<Tensor> params = model.parameters();
  if (!c.get_bool("optim.no_decay_norm_and_bias")) return single_group(std::move(params));
  // Biases and normalisation scales are 1-D: decaying them only hurts.
  std::vector<ParamGroup> groups(2);
  for (Tensor& p : params) groups[p.dim() <= 1 ? 1 : 0].params.push_back(p);
  groups[1].options["weight_decay"] = 0.0;
  return groups;
}

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const Config& c, nn::Module& model) {
  const std::string& name = c.get_string("optim.name");
  const double lr = c.get_float("optim.lr"), wd = c.get_float("optim.weight_decay");
  auto groups = param_groups(c, model);
  auto betas = c.get_float_list("optim.betas");
  if (name == "adam" || name == "adamw") {
    EMBER_CHECK(betas.size() == 2, "optim.betas needs two values, got {}", betas.size());
  }
  if (name == "sgd") {
    SGDOptions o;
    o.lr = lr, o.momentum = c.get_float("optim.momentum"), o.weight_decay = wd;
    o.nesterov = c.get_bool("optim.nesterov");
    return std::make_unique<SGD>(std::move(groups), o);
  }
  if (name == "adam") {
    AdamOptions o;
    o.lr = lr, o.beta1 = betas[0], o.beta2 = betas[1], o.eps = c.get_float("optim.eps"), o.weight_decay = wd;
    return std::make_unique<Adam>(std::move(groups), o);
  }
  if (name == "adamw") {
    AdamWOptions o;
    o.lr = lr, o.beta1 = betas[0], o.beta2 = betas[1], o.eps = c.get_float("optim.eps");
    if (c.is_set("optim.weight_decay")) o.weight_decay = wd;  // else AdamW's own default, 1e-2
    return std::make_unique<AdamW>(std::move(groups), o);
  }
  if (name == "rmsprop") {
    RMSpropOptions o;
    o.lr = lr, o.alpha = c.get_float("optim.alpha"), o.eps = c.get_float("optim.eps"), o.weight_decay = wd;
    o.momentum = c.get_float("optim.momentum");
    return std::make_unique<RMSprop>(std::move(groups), o);
  }
  AdagradOptions o;
  o.lr = lr, o.weight_decay = wd;
  if (c.is_set("optim.eps")) o.eps = c.get_float("optim.eps");
  return std::make_unique<Adagrad>(std::move(groups), o);
}

namespace {

// Optimizer steps of warm-up: schedule.warmup_steps, or warmup_epochs in
// steps, capped to warmup_max_fraction of the run's steps.
std::pair<int64_t, int64_t> warmup_length(const Config& c, int64_t steps_per_epoch) {
  const int64_t steps = c.get_int("schedule.warmup_steps"), epochs = c.get_int("schedule.warmup_epochs");
  if (steps > 0 && epochs > 0)
    throw ConfigError(fmt::format("schedule.warmup_steps ({}) and schedule.warmup_epochs ({}) are both set; "
                                  "set one of them to 0", steps, epochs));
  const int64_t requested = steps > 0 ? steps : epochs * steps_per_epoch;
  const int64_t run_steps = c.get_int("train.epochs") * steps_per_epoch;
  const auto cap = static_cast<int64_t>(c.get_float("schedule.warmup_max_fraction") * static_cast<double>(run_steps));
  return {std::min(requested, cap), requested};
}

}  // namespace

Schedule::Schedule(const Config& c, Optimizer& optimizer, int64_t steps_per_epoch, bool higher_is_better)
    : optimizer_(&optimizer) {
  const std::string& name = c.get_string("schedule.name");
  const int64_t epochs = c.get_int("train.epochs");
  auto [warmup, requested] = warmup_length(c, steps_per_epoch);
  if (name == "onecycle" || name == "plateau") {
    if (requested > 0)
      throw ConfigError(fmt::format("schedule.warmup_{} is not used with schedule.name = {} ({}); set it to 0",
                                    c.get_int("schedule.warmup_steps") > 0 ? "steps" : "epochs", name,
                                    name == "onecycle" ? "it warms up by itself" : "it reacts to a metric"));
    if (name == "onecycle") {
      OneCycleLROptions o;
      double max_lr = c.get_float("schedule.max_lr");
      o.max_lr = {max_lr > 0 ? max_lr : 10 * c.get_float("optim.lr")};
      o.epochs = epochs;
      o.steps_per_epoch = steps_per_epoch;
      o.cycle_momentum = c.get_string("optim.name") != "adagrad" && c.get_string("optim.name") != "rmsprop";
      per_step_ = std::make_shared<OneCycleLR>(optimizer, o);
    } else {
      ReduceLROnPlateauOptions o;
      o.mode = higher_is_better ? "max" : "min";
      o.factor = c.get_float("schedule.factor");
      o.patience = c.get_int("schedule.patience");
      plateau_ = std::make_unique<ReduceLROnPlateau>(optimizer, o);
    }
    return;
  }
  if (name == "step") {
    epoch_ = std::make_shared<StepLR>(optimizer, c.get_int("schedule.step_size"), c.get_float("schedule.gamma"));
  } else if (name == "multistep") {
    epoch_ = std::make_shared<MultiStepLR>(optimizer, c.get_int_list("schedule.milestones"),
                                           c.get_float("schedule.gamma"));
  } else if (name == "exponential") {
    epoch_ = std::make_shared<ExponentialLR>(optimizer, c.get_float("schedule.gamma"));
  } else if (name == "cosine") {
    int64_t t_max = c.get_int("schedule.t_max");
    epoch_ = std::make_shared<CosineAnnealingLR>(optimizer, t_max > 0 ? t_max : epochs, c.get_float("schedule.eta_min"));
  } else if (name == "linear") {
    epoch_ = std::make_shared<LinearLR>(optimizer, 1.0, c.get_float("schedule.end_factor"), epochs);
  }
  warmup_steps_ = warmup;
  warmup_requested_ = warmup < requested ? requested : 0;
  warmup_start_factor_ = c.get_float("schedule.warmup_start_factor");
  for (const auto& g : optimizer.param_groups()) scheduled_lrs_.push_back(g.lr());
  apply_warmup();
}

void Schedule::apply_warmup() {
  if (warmup_steps_ == 0) return;
  const double progress = std::min(1.0, static_cast<double>(warmup_done_) / static_cast<double>(warmup_steps_));
  const double factor = warmup_start_factor_ + (1.0 - warmup_start_factor_) * progress;
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size() && i < scheduled_lrs_.size(); ++i)
    groups[i].set_lr(scheduled_lrs_[i] * factor);
}

void Schedule::after_optimizer_step() {
  if (per_step_) per_step_->step();
  if (warmup_done_ < warmup_steps_) {
    ++warmup_done_;
    apply_warmup();
  }
}

void Schedule::after_epoch(double monitored_metric) {
  if (epoch_) {
    // Chainable schedulers compute the next lr from the current one: hand
    // them their own value, not the warmed one.
    auto& groups = optimizer_->param_groups();
    for (size_t i = 0; i < groups.size() && i < scheduled_lrs_.size(); ++i)
      groups[i].set_lr(scheduled_lrs_[i]);
    epoch_->step();
    for (size_t i = 0; i < groups.size() && i < scheduled_lrs_.size(); ++i) scheduled_lrs_[i] = groups[i].lr();
    apply_warmup();
  }
  if (plateau_) plateau_->step(monitored_metric);
}

double Schedule::lr() const { return optimizer_->param_groups().front().lr(); }

SchedulerState Schedule::state_dict() const {
  SchedulerState s;
  if (epoch_) s = epoch_->state_dict();
  else if (per_step_) s = per_step_->state_dict();
  else if (plateau_) s = plateau_->state_dict();
  if (warmup_steps_ > 0) {
    s["warmup.steps"] = static_cast<double>(warmup_steps_);
    s["warmup.done"] = static_cast<double>(warmup_done_);
    for (size_t i = 0; i < scheduled_lrs_.size(); ++i) s[fmt::format("warmup.scheduled_lr.{}", i)] = scheduled_lrs_[i];
  }
  return s;
}

void Schedule::load_state_dict(const SchedulerState& state) {
  if (epoch_) epoch_->load_state_dict(state);
  else if (per_step_) per_step_->load_state_dict(state);
  else if (plateau_) plateau_->load_state_dict(state);
  auto count = [&](const char* key) {
    const double v = state.at(key);
    EMBER_CHECK(v >= 0 && v <= 9.0e15 && v == std::floor(v), "LR schedule state: '{}' = {} is not a step count", key, v);
    return static_cast<int64_t>(v);
  };
  // The warm-up that ran stays the warm-up: a longer train.epochs on resume
  // moves the cap, not the steps already taken. A checkpoint without warm-up
  // state (written without one, or before warm-up counted steps) has none left.
  if (state.count("warmup.steps") && state.count("warmup.done")) {
    warmup_steps_ = count("warmup.steps");
    warmup_done_ = std::min(count("warmup.done"), warmup_steps_);
  } else {
    warmup_steps_ = warmup_done_ = 0;
  }
  scheduled_lrs_.clear();
  for (const auto& g : optimizer_->param_groups()) scheduled_lrs_.push_back(g.lr());
  for (size_t i = 0; i < scheduled_lrs_.size(); ++i) {
    auto it = state.find(fmt::format("warmup.scheduled_lr.{}", i));
    if (it != state.end()) scheduled_lrs_[i] = it->second;
    else if (epoch_ && i < epoch_->get_last_lr().size()) scheduled_lrs_[i] = epoch_->get_last_lr()[i];
  }
  apply_warmup();
}

}  // namespace ember::train

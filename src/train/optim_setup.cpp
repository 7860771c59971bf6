#include "ember/train/optim_setup.h"

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

Schedule::Schedule(const Config& c, Optimizer& optimizer, int64_t steps_per_epoch, bool higher_is_better)
    : optimizer_(&optimizer) {
  const std::string& name = c.get_string("schedule.name");
  const int64_t warmup = c.get_int("schedule.warmup_epochs"), epochs = c.get_int("train.epochs");
  if (name == "onecycle" || name == "plateau") {
    if (warmup > 0)
      throw ConfigError(fmt::format("schedule.warmup_epochs is not used with schedule.name = {} ({}); set it to 0",
                                    name, name == "onecycle" ? "it warms up by itself" : "it reacts to a metric"));
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
  std::shared_ptr<LRScheduler> main;
  const int64_t span = std::max<int64_t>(1, epochs - warmup);
  if (name == "step") {
    main = std::make_shared<StepLR>(optimizer, c.get_int("schedule.step_size"), c.get_float("schedule.gamma"));
  } else if (name == "multistep") {
    main = std::make_shared<MultiStepLR>(optimizer, c.get_int_list("schedule.milestones"),
                                         c.get_float("schedule.gamma"));
  } else if (name == "exponential") {
    main = std::make_shared<ExponentialLR>(optimizer, c.get_float("schedule.gamma"));
  } else if (name == "cosine") {
    int64_t t_max = c.get_int("schedule.t_max");
    main = std::make_shared<CosineAnnealingLR>(optimizer, t_max > 0 ? t_max : span, c.get_float("schedule.eta_min"));
  } else if (name == "linear") {
    main = std::make_shared<LinearLR>(optimizer, 1.0, c.get_float("schedule.end_factor"), span);
  } else if (warmup > 0) {
    main = std::make_shared<LinearLR>(optimizer, 1.0, 1.0, 1);  // constant after warmup
  }
  if (warmup > 0) {
    auto ramp = std::make_shared<LinearLR>(optimizer, c.get_float("schedule.warmup_start_factor"), 1.0, warmup);
    epoch_ = std::make_shared<SequentialLR>(optimizer, std::vector<std::shared_ptr<LRScheduler>>{ramp, main},
                                            std::vector<int64_t>{warmup});
  } else {
    epoch_ = main;
  }
}

void Schedule::after_optimizer_step() {
  if (per_step_) per_step_->step();
}

void Schedule::after_epoch(double monitored_metric) {
  if (epoch_) epoch_->step();
  if (plateau_) plateau_->step(monitored_metric);
}

double Schedule::lr() const { return optimizer_->param_groups().front().lr(); }

SchedulerState Schedule::state_dict() const {
  if (epoch_) return epoch_->state_dict();
  if (per_step_) return per_step_->state_dict();
  if (plateau_) return plateau_->state_dict();
  return {};
}

void Schedule::load_state_dict(const SchedulerState& state) {
  if (epoch_) epoch_->load_state_dict(state);
  else if (per_step_) per_step_->load_state_dict(state);
  else if (plateau_) plateau_->load_state_dict(state);
}

}  // namespace ember::train

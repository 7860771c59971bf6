// optim.* and schedule.* options -> an optimizer and its learning-rate
// schedule (with warmup), stepped by the trainer.
#pragma once

#include <memory>
#include <vector>

#include "ember/nn/module.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/train/config.h"

namespace ember::train {

std::unique_ptr<optim::Optimizer> make_optimizer(const Config& config, nn::Module& model);

// The schedule of one run: an epoch-level LRScheduler, OneCycleLR stepped
// per optimizer step, or ReduceLROnPlateau fed the monitored metric. A linear
// warm-up (schedule.warmup_steps or schedule.warmup_epochs, capped to
// schedule.warmup_max_fraction of the run) counts optimizer steps and scales
// the epoch schedule's lr, so a 1-epoch run is not all warm-up.
class Schedule {
 public:
  // higher_is_better: the direction of the metric fed to after_epoch (plateau).
  Schedule(const Config& config, optim::Optimizer& optimizer, int64_t steps_per_epoch, bool higher_is_better);
  void after_optimizer_step();
  void after_epoch(double monitored_metric);
  double lr() const;  // first param group's current lr
  int64_t warmup_steps() const { return warmup_steps_; }
  // The warm-up the config asked for, when the cap shortened it (else 0).
  int64_t warmup_steps_requested() const { return warmup_requested_; }
  optim::SchedulerState state_dict() const;
  void load_state_dict(const optim::SchedulerState& state);

 private:
  void apply_warmup();  // group lr = the schedule's lr x the ramp's factor

  optim::Optimizer* optimizer_;
  std::shared_ptr<optim::LRScheduler> epoch_;     // per-epoch schedulers
  std::shared_ptr<optim::LRScheduler> per_step_;  // onecycle
  std::unique_ptr<optim::ReduceLROnPlateau> plateau_;
  int64_t warmup_steps_ = 0, warmup_requested_ = 0, warmup_done_ = 0;
  double warmup_start_factor_ = 1.0;
  std::vector<double> scheduled_lrs_;  // per group, before the warm-up factor
};

}  // namespace ember::train

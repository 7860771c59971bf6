// optim.* and schedule.* options -> an optimizer and its learning-rate
// schedule (with warmup), stepped by the trainer.
#pragma once

#include <memory>

#include "ember/nn/module.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/train/config.h"

namespace ember::train {

std::unique_ptr<optim::Optimizer> make_optimizer(const Config& config, nn::Module& model);

// The schedule of one run: an epoch-level LRScheduler (optionally behind a
// linear warmup), OneCycleLR stepped per optimizer step, or
// ReduceLROnPlateau fed the monitored metric.
class Schedule {
 public:
  // higher_is_better: the direction of the metric fed to after_epoch (plateau).
  Schedule(const Config& config, optim::Optimizer& optimizer, int64_t steps_per_epoch, bool higher_is_better);
  void after_optimizer_step();
  void after_epoch(double monitored_metric);
  double lr() const;  // first param group's current lr
  optim::SchedulerState state_dict() const;
  void load_state_dict(const optim::SchedulerState& state);

 private:
  optim::Optimizer* optimizer_;
  std::shared_ptr<optim::LRScheduler> epoch_;     // per-epoch schedulers
  std::shared_ptr<optim::LRScheduler> per_step_;  // onecycle
  std::unique_ptr<optim::ReduceLROnPlateau> plateau_;
};

}  // namespace ember::train

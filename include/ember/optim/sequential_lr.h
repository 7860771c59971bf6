// SequentialLR: runs one scheduler after another, switching at milestones
// (e.g. LinearLR warmup, then CosineAnnealingLR).
#pragma once

#include <memory>
#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

class SequentialLR : public LRScheduler {
 public:
  // schedulers.size() == milestones.size() + 1; all share `optimizer`.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);
  const char* name() const override { return "SequentialLR"; }

  void step() override;
  void step(int64_t epoch) override;

  // Own keys plus each scheduler's state under "_schedulers.<i>.".
  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;

 protected:
  std::vector<double> get_lr() override { return group_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace ember::optim

// OneCycleLR: the 1cycle policy (warm up to max_lr, anneal far below the
// start), cycling momentum (SGD) or beta1 (Adam-like) inversely to the lr.
#pragma once

#include <string>
#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

struct OneCycleLROptions {
  // One value for every group, or one per group.
  std::vector<double> max_lr;
  // The cycle's length; when 0, epochs * steps_per_epoch.
  int64_t total_steps = 0;
  int64_t epochs = 0;
  int64_t steps_per_epoch = 0;
  double pct_start = 0.3;
  std::string anneal_strategy = "cos";  // "cos" or "linear"
  bool cycle_momentum = true;
  std::vector<double> base_momentum = {0.85};
  std::vector<double> max_momentum = {0.95};
  double div_factor = 25;       // initial_lr = max_lr / div_factor
  double final_div_factor = 1e4;  // min_lr = initial_lr / final_div_factor
  bool three_phase = false;
  int64_t last_epoch = -1;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, OneCycleLROptions options);
  const char* name() const override { return "OneCycleLR"; }
  int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    const char* start_lr;
    const char* end_lr;
    const char* start_momentum;
    const char* end_momentum;
  };
  double anneal(double start, double end, double pct) const;

  OneCycleLROptions options_;
  int64_t total_steps_;
  std::vector<Phase> phases_;
  bool use_beta1_ = false;
};

}  // namespace ember::optim

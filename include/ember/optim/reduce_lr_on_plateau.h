// ReduceLROnPlateau: cuts the lr by `factor` when a metric stops improving
// for `patience` epochs (torch.optim.lr_scheduler.ReduceLROnPlateau).
#pragma once

#include <string>
#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

struct ReduceLROnPlateauOptions {
  std::string mode = "min";  // "min": lower is better; "max": higher is better
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // "rel" or "abs"
  int64_t cooldown = 0;
  std::vector<double> min_lr = {0.0};  // one value, or one per group
  double eps = 1e-8;  // smaller lr changes are skipped
};

class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});

  // Records this epoch's metric and lowers lrs after too many bad epochs.
  void step(double metric);

  const std::vector<double>& get_last_lr() const { return last_lr_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t last_epoch() const { return last_epoch_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }
  bool is_better(double a, double best) const;

  // "best", "num_bad_epochs", "cooldown_counter", "last_epoch", "_last_lr.<i>"
  // (best may be +-inf before the first step).
  SchedulerState state_dict() const;
  void load_state_dict(const SchedulerState& state);

 private:
  void reduce_lr();

  Optimizer* optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace ember::optim

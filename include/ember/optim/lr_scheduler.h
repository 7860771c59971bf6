// Learning-rate schedulers (torch.optim.lr_scheduler): the LRScheduler base
// and the simple per-epoch decays. Values follow PyTorch 1.13's recursive
// formulas (each step scales the group's current lr), so they match torch
// bit for bit rather than only the closed forms.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

// A scheduler's state by name ("last_epoch", "base_lrs.0", "_last_lr.0",
// nested schedulers as "_schedulers.<i>.<key>"): numbers only, JSON-able.
using SchedulerState = std::map<std::string, double>;

// Writes lrs into an optimizer's groups once per step(). The optimizer must
// outlive the scheduler. Call optimizer.step() before scheduler.step().
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  virtual const char* name() const = 0;

  // Advances one epoch (or iteration) and sets every group's lr.
  virtual void step();
  // Jumps to `epoch`, using the closed form where the schedule has one
  // (PyTorch's deprecated step(epoch); SequentialLR uses step(0)).
  virtual void step(int64_t epoch);

  // The lrs the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  Optimizer& optimizer() const { return *optimizer_; }

  virtual SchedulerState state_dict() const;
  virtual void load_state_dict(const SchedulerState& state);

 protected:
  // last_epoch = -1 starts a schedule (recording each group's lr as
  // "initial_lr"); another value resumes one and needs "initial_lr" set.
  LRScheduler(Optimizer& optimizer, int64_t last_epoch);
  // The first step; every concrete constructor ends with it (a base
  // constructor cannot call the derived get_lr).
  void initial_step();

  // The lrs for last_epoch_, from the groups' current lrs.
  virtual std::vector<double> get_lr() = 0;
  // The lrs for last_epoch_ from base_lrs alone; defaults to get_lr().
  virtual std::vector<double> closed_form_lr() { return get_lr(); }

  std::vector<double> group_lrs() const;
  void apply_lrs(const std::vector<double>& lrs);

  Optimizer* optimizer_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

  friend class SequentialLR;
};

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
  const char* name() const override { return "StepLR"; }

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma at each milestone epoch (a milestone listed twice applies twice).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);
  const char* name() const override { return "MultiStepLR"; }

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch = -1);
  const char* name() const override { return "ExponentialLR"; }

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double gamma_;
};

// Cosine from the base lr down to eta_min over T_max epochs, then back up
// (SGDR without restarts), by PyTorch's recursive formula.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0, int64_t last_epoch = -1);
  const char* name() const override { return "CosineAnnealingLR"; }

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// Linear warmup (or decay): the factor on the base lr goes from start_factor
// to end_factor over total_iters steps, then stays.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);
  const char* name() const override { return "LinearLR"; }

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

}  // namespace ember::optim

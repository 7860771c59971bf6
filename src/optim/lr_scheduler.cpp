// LRScheduler base and the simple decays (PyTorch 1.13's recursive formulas).
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "option_util.h"

namespace ember::optim {

namespace {
double state_value(const SchedulerState& s, const std::string& key, const char* who) {
  auto it = s.find(key);
  EMBER_CHECK(it != s.end(), "{}.load_state_dict: missing key '{}'", who, key);
  return it->second;
}
}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch) : optimizer_(&optimizer), last_epoch_(last_epoch) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    if (last_epoch == -1) {
      groups[i].options.emplace("initial_lr", groups[i].lr());
    } else {
      EMBER_CHECK(groups[i].has("initial_lr"),
                  "param 'initial_lr' is not specified in param_groups[{}] when resuming an optimizer; resume "
                  "from the optimizer's state_dict, or start with last_epoch = -1",
                  i);
    }
    base_lrs_.push_back(groups[i].get("initial_lr"));
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_->param_groups()) lrs.push_back(g.lr());
  return lrs;
}

void LRScheduler::apply_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_->param_groups();
  EMBER_ASSERT(lrs.size() == groups.size(), "{} computed {} lrs for {} groups", name(), lrs.size(), groups.size());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].set_lr(lrs[i]);
  last_lr_ = group_lrs();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  apply_lrs(get_lr());
}

void LRScheduler::step(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  apply_lrs(closed_form_lr());
}

SchedulerState LRScheduler::state_dict() const {
  SchedulerState s;
  s["last_epoch"] = static_cast<double>(last_epoch_);
  s["_step_count"] = static_cast<double>(step_count_);
  for (size_t i = 0; i < base_lrs_.size(); ++i) s[fmt::format("base_lrs.{}", i)] = base_lrs_[i];
  for (size_t i = 0; i < last_lr_.size(); ++i) s[fmt::format("_last_lr.{}", i)] = last_lr_[i];
  return s;
}

void LRScheduler::load_state_dict(const SchedulerState& s) {
  last_epoch_ = detail::state_count(state_value(s, "last_epoch", name()), "last_epoch", name());
  step_count_ = detail::state_count(state_value(s, "_step_count", name()), "_step_count", name());
  const size_t n = optimizer_->param_groups().size();
  base_lrs_.assign(n, 0.0);
  last_lr_.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    base_lrs_[i] = state_value(s, fmt::format("base_lrs.{}", i), name());
    last_lr_[i] = state_value(s, fmt::format("_last_lr.{}", i), name());
  }
}

// ---- StepLR ----

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "StepLR: step_size must be positive, got {}", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lr() {
  std::vector<double> lrs;
  // Python's // floors: -1 // 2 == -1.
  const int64_t k = static_cast<int64_t>(std::floor(static_cast<double>(last_epoch_) / step_size_));
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(k)));
  return lrs;
}

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(count));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lr() {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

// ---- ExponentialLR ----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be positive, got {}", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  using std::numbers::pi;
  std::vector<double> lrs = group_lrs();
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    // Resumed mid-schedule: nothing recursive to build on yet.
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * pi / T)) / 2;
    return lrs;
  }
  // Python's % is non-negative for a positive divisor.
  const int64_t period = 2 * T_max_;
  const int64_t phase = (((last_epoch_ - 1 - T_max_) % period) + period) % period;
  if (phase == 0) {
    for (size_t i = 0; i < lrs.size(); ++i) lrs[i] += (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    return lrs;
  }
  for (double& lr : lrs)
    lr = (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() {
  using std::numbers::pi;
  std::vector<double> lrs;
  for (double base : base_lrs_)
    lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(pi * last_epoch_ / T_max_)) / 2);
  return lrs;
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters,
                   int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), start_factor_(start_factor), end_factor_(end_factor),
      total_iters_(total_iters) {
  EMBER_CHECK(start_factor >= 0 && start_factor <= 1,
              "LinearLR: starting multiplicative factor expected to be between 0 and 1, got {}", start_factor);
  EMBER_CHECK(end_factor >= 0 && end_factor <= 1,
              "LinearLR: ending multiplicative factor expected to be between 0 and 1, got {}", end_factor);
  EMBER_CHECK(total_iters > 0, "LinearLR: total_iters must be positive, got {}", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double delta = end_factor_ - start_factor_;
  const double factor =
      1.0 + delta / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * delta);
  for (double& lr : lrs) lr *= factor;
  return lrs;
}

std::vector<double> LinearLR::closed_form_lr() {
  std::vector<double> lrs;
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_));
  for (double base : base_lrs_)
    lrs.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_)));
  return lrs;
}

}  // namespace ember::optim

// ReduceLROnPlateau (PyTorch 1.13's comparisons, patience and cooldown).
#include "ember/optim/reduce_lr_on_plateau.h"

#include <algorithm>
#include <limits>

#include "option_util.h"

namespace ember::optim {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions o)
    : optimizer_(&optimizer), options_(std::move(o)) {
  EMBER_CHECK(options_.factor < 1.0, "ReduceLROnPlateau: factor should be < 1.0, got {}", options_.factor);
  EMBER_CHECK(options_.mode == "min" || options_.mode == "max",
              "ReduceLROnPlateau: mode '{}' is unknown; use \"min\" or \"max\"", options_.mode);
  EMBER_CHECK(options_.threshold_mode == "rel" || options_.threshold_mode == "abs",
              "ReduceLROnPlateau: threshold mode '{}' is unknown; use \"rel\" or \"abs\"", options_.threshold_mode);
  const size_t n = optimizer.param_groups().size();
  EMBER_CHECK(options_.min_lr.size() == 1 || options_.min_lr.size() == n,
              "ReduceLROnPlateau: expected {} min_lrs, got {}", n, options_.min_lr.size());
  min_lrs_ = options_.min_lr.size() == 1 ? std::vector<double>(n, options_.min_lr[0]) : options_.min_lr;
  const double inf = std::numeric_limits<double>::infinity();
  best_ = options_.mode == "min" ? inf : -inf;
  for (const auto& g : optimizer.param_groups()) last_lr_.push_back(g.lr());
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  const bool rel = options_.threshold_mode == "rel";
  if (options_.mode == "min") return rel ? a < best * (1.0 - options_.threshold) : a < best - options_.threshold;
  return rel ? a > best * (options_.threshold + 1.0) : a > best + options_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  last_epoch_ += 1;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    num_bad_epochs_ += 1;
  }
  if (in_cooldown()) {
    cooldown_counter_ -= 1;
    num_bad_epochs_ = 0;  // bad epochs during cooldown do not count
  }
  if (num_bad_epochs_ > options_.patience) {
    reduce_lr();
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const auto& g : optimizer_->param_groups()) last_lr_.push_back(g.lr());
}

void ReduceLROnPlateau::reduce_lr() {
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double old_lr = groups[i].lr();
    const double new_lr = std::max(old_lr * options_.factor, min_lrs_[i]);
    if (old_lr - new_lr > options_.eps) groups[i].set_lr(new_lr);
  }
}

SchedulerState ReduceLROnPlateau::state_dict() const {
  SchedulerState s{{"best", best_},
                   {"num_bad_epochs", static_cast<double>(num_bad_epochs_)},
                   {"cooldown_counter", static_cast<double>(cooldown_counter_)},
                   {"last_epoch", static_cast<double>(last_epoch_)}};
  for (size_t i = 0; i < last_lr_.size(); ++i) s[fmt::format("_last_lr.{}", i)] = last_lr_[i];
  return s;
}

void ReduceLROnPlateau::load_state_dict(const SchedulerState& s) {
  auto get = [&](const std::string& key) {
    auto it = s.find(key);
    EMBER_CHECK(it != s.end(), "ReduceLROnPlateau.load_state_dict: missing key '{}'", key);
    return it->second;
  };
  best_ = get("best");
  num_bad_epochs_ = detail::state_count(get("num_bad_epochs"), "num_bad_epochs", "ReduceLROnPlateau");
  cooldown_counter_ = detail::state_count(get("cooldown_counter"), "cooldown_counter", "ReduceLROnPlateau");
  last_epoch_ = detail::state_count(get("last_epoch"), "last_epoch", "ReduceLROnPlateau");
  for (size_t i = 0; i < last_lr_.size(); ++i) last_lr_[i] = get(fmt::format("_last_lr.{}", i));
}

}  // namespace ember::optim

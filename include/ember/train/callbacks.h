// Watching a metric across epochs: best-model selection and early stopping.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace ember::train {

enum class MetricMode { Min, Max };
// "min" / "max", or "auto": max for accuracy, precision, recall and F1
// (names containing acc, precision, recall, f1), min otherwise.
MetricMode resolve_mode(const std::string& mode, const std::string& metric);

// Tracks the best value of one metric. A value improves on the best when
// it beats it by more than min_delta; NaN never improves.
class MetricTracker {
 public:
  MetricTracker(MetricMode mode = MetricMode::Min, double min_delta = 0.0) : mode_(mode), min_delta_(min_delta) {}
  // Returns true when `value` (at `epoch`) is the new best.
  bool update(double value, int64_t epoch);
  bool has_best() const { return best_epoch_ >= 0; }
  double best() const { return best_; }
  int64_t best_epoch() const { return best_epoch_; }
  int64_t epochs_since_best() const { return since_best_; }
  MetricMode mode() const { return mode_; }

  std::string state_json() const;
  void load_state_json(const std::string& json_text);

 private:
  MetricMode mode_;
  double min_delta_;
  double best_ = std::numeric_limits<double>::quiet_NaN();
  int64_t best_epoch_ = -1;
  int64_t since_best_ = 0;
};

// Stops after `patience` epochs without improvement, as Lightning's
// EarlyStopping (PyTorch users' usual reference).
class EarlyStopping {
 public:
  EarlyStopping(std::string monitor, MetricMode mode, int64_t patience, double min_delta);
  // Feeds one epoch's value; returns true when training should stop now.
  bool update(double value, int64_t epoch);
  const std::string& monitor() const { return monitor_; }
  const MetricTracker& tracker() const { return tracker_; }
  int64_t patience() const { return patience_; }
  std::string state_json() const { return tracker_.state_json(); }
  void load_state_json(const std::string& s) { tracker_.load_state_json(s); }

 private:
  std::string monitor_;
  MetricTracker tracker_;
  int64_t patience_;
};

}  // namespace ember::train

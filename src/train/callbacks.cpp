#include "ember/train/callbacks.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "ember/core/error.h"

namespace ember::train {

MetricMode resolve_mode(const std::string& mode, const std::string& metric) {
  if (mode == "min") return MetricMode::Min;
  if (mode == "max") return MetricMode::Max;
  EMBER_CHECK(mode == "auto", "metric mode must be min, max or auto, got '{}'", mode);
  for (const char* up : {"acc", "precision", "recall", "f1"})
    if (metric.find(up) != std::string::npos) return MetricMode::Max;
  return MetricMode::Min;
}

bool MetricTracker::update(double value, int64_t epoch) {
  bool better = false;
  if (!std::isnan(value)) {
    if (!has_best()) better = true;
    else if (mode_ == MetricMode::Min) better = value < best_ - min_delta_;
    else better = value > best_ + min_delta_;
  }
  if (better) {
    best_ = value;
    best_epoch_ = epoch;
    since_best_ = 0;
  } else {
    ++since_best_;
  }
  return better;
}

std::string MetricTracker::state_json() const {
  nlohmann::json j;
  // JSON has no NaN: an absent best is best_epoch = -1.
  j["best"] = has_best() ? best_ : 0.0;
  j["best_epoch"] = best_epoch_;
  j["since_best"] = since_best_;
  return j.dump();
}

void MetricTracker::load_state_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EMBER_CHECK(!j.is_discarded() && j.contains("best") && j.contains("best_epoch") && j.contains("since_best"),
              "MetricTracker: state '{}' is not valid (expected best, best_epoch, since_best)", text);
  // The state comes from a checkpoint file: check the types instead of letting
  // nlohmann's get<> throw its own "type must be number" exception.
  EMBER_CHECK(j["best_epoch"].is_number_integer() && j["best_epoch"].get<int64_t>() >= -1,
              "MetricTracker: state field 'best_epoch' = {} is not an epoch (an integer >= -1)", j["best_epoch"].dump());
  EMBER_CHECK(j["since_best"].is_number_integer() && j["since_best"].get<int64_t>() >= 0,
              "MetricTracker: state field 'since_best' = {} is not a count", j["since_best"].dump());
  EMBER_CHECK(j["best"].is_number(), "MetricTracker: state field 'best' = {} is not a number", j["best"].dump());
  best_epoch_ = j["best_epoch"].get<int64_t>();
  best_ = best_epoch_ >= 0 ? j["best"].get<double>() : std::numeric_limits<double>::quiet_NaN();
  since_best_ = j["since_best"].get<int64_t>();
}

EarlyStopping::EarlyStopping(std::string monitor, MetricMode mode, int64_t patience, double min_delta)
    : monitor_(std::move(monitor)), tracker_(mode, min_delta), patience_(patience) {
  EMBER_CHECK(patience_ >= 1, "train.early_stopping.patience must be at least 1, got {}", patience_);
  EMBER_CHECK(min_delta >= 0, "train.early_stopping.min_delta must be >= 0, got {}", min_delta);
}

bool EarlyStopping::update(double value, int64_t epoch) {
  tracker_.update(value, epoch);
  return tracker_.epochs_since_best() >= patience_;
}

}  // namespace ember::train

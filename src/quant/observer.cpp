#include "ember/quant/observer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/error.h"

namespace ember::quant {

ObserverKind observer_from_name(const std::string& name) {
  if (name == "minmax") return ObserverKind::MinMax;
  if (name == "moving_average") return ObserverKind::MovingAverageMinMax;
  if (name == "histogram") return ObserverKind::Histogram;
  EMBER_ERROR("unknown observer '{}'; choices: minmax, moving_average, histogram", name);
}

std::string observer_name(ObserverKind k) {
  switch (k) {
    case ObserverKind::MinMax: return "minmax";
    case ObserverKind::MovingAverageMinMax: return "moving_average";
    case ObserverKind::Histogram: return "histogram";
  }
  return "?";
}

Observer::Observer(ObserverConfig config) : config_(config) {
  EMBER_CHECK(config_.averaging_constant > 0 && config_.averaging_constant <= 1,
              "Observer: averaging_constant must be in (0, 1], got {}", config_.averaging_constant);
  EMBER_CHECK(config_.percentile > 0 && config_.percentile <= 100, "Observer: percentile must be in (0, 100], got {}",
              config_.percentile);
  EMBER_CHECK(config_.bins >= 2 && config_.bins % 2 == 0 && config_.bins <= (int64_t{1} << 20),
              "Observer: bins must be even, 2 to 2^20, got {}", config_.bins);
}

void Observer::observe(const Tensor& x_in) {
  EMBER_CHECK(x_in.dtype() == kFloat32, "Observer: expected float32 values, got {}", to_string(x_in.dtype()));
  const Tensor x = x_in.contiguous();
  const float* p = x.data_ptr<float>();
  const int64_t n = x.numel();
  float lo = INFINITY, hi = -INFINITY;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(p[i])) continue;
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
    ++finite;
  }
  if (finite == 0) return;
  negative_ = negative_ || lo < 0;
  if (batches_ == 0 || config_.kind != ObserverKind::MovingAverageMinMax) {
    min_ = batches_ == 0 ? lo : std::min(min_, lo);
    max_ = batches_ == 0 ? hi : std::max(max_, hi);
  } else {
    const float c = static_cast<float>(config_.averaging_constant);
    min_ += c * (lo - min_);
    max_ += c * (hi - max_);
  }
  if (config_.kind == ObserverKind::Histogram) add_to_histogram(p, n, std::max(std::fabs(lo), std::fabs(hi)));
  ++batches_;
  count_ += finite;
}

// Bins of |x| over [0, top); a larger value doubles top, merging bin pairs
// (exact: no count moves to a bin whose range does not hold it).
void Observer::add_to_histogram(const float* x, int64_t n, float batch_absmax) {
  const auto bins = static_cast<size_t>(config_.bins);
  if (hist_.empty()) hist_.assign(bins, 0);
  if (!std::isfinite(batch_absmax)) batch_absmax = std::numeric_limits<float>::max() / 4;
  if (hist_top_ == 0 && batch_absmax > 0) {
    hist_top_ = batch_absmax * (1 + 1e-6f);
  }
  while (batch_absmax >= hist_top_ && hist_top_ > 0) {
    for (size_t i = 0; i < bins / 2; ++i) hist_[i] = hist_[2 * i] + hist_[2 * i + 1];
    std::fill(hist_.begin() + static_cast<std::ptrdiff_t>(bins / 2), hist_.end(), 0);
    hist_top_ *= 2;
  }
  const float per_bin = hist_top_ > 0 ? static_cast<float>(bins) / hist_top_ : 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    const float b = std::fabs(x[i]) * per_bin;
    hist_[std::min(bins - 1, static_cast<size_t>(std::isfinite(b) ? b : static_cast<float>(bins)))] += 1;
  }
}

float Observer::bound() const {
  EMBER_CHECK(batches_ > 0, "Observer: no values observed yet (run calibration batches first)");
  float b = std::max(std::fabs(min_), std::fabs(max_));
  if (config_.kind == ObserverKind::Histogram && hist_top_ > 0) {
    int64_t total = 0;
    for (int64_t c : hist_) total += c;
    const double want = config_.percentile / 100.0 * static_cast<double>(total);
    int64_t seen = 0;
    size_t i = 0;
    for (; i + 1 < hist_.size(); ++i) {
      seen += hist_[i];
      if (static_cast<double>(seen) >= want) break;
    }
    // The bin's upper edge, never past the largest value seen.
    b = std::min(b, static_cast<float>(i + 1) * hist_top_ / static_cast<float>(hist_.size()));
  }
  return b > 0 && std::isfinite(b) ? b : 1.f;
}

}  // namespace ember::quant

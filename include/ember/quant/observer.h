// Observers for static quantization (torch.ao.quantization's MinMaxObserver,
// MovingAverageMinMaxObserver and a percentile HistogramObserver): each
// watches the float values an activation takes over calibration batches and
// proposes the range its int8 form keeps. Ember's activations are
// quantized with zero point 0 (Note [static int8] in
// src/jit/passes/quantize_static.cpp), so a range is the sign (are there
// negative values?) and one magnitude, the clipping bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::quant {

enum class ObserverKind {
  MinMax,               // the extremes over every batch
  MovingAverageMinMax,  // per-batch extremes, averaged: m += c * (batch - m)
  Histogram,            // a histogram of |x|; the bound keeps `percentile` % of the values
};

// "minmax", "moving_average", "histogram"; throws naming the choices otherwise.
ObserverKind observer_from_name(const std::string& name);
std::string observer_name(ObserverKind k);

struct ObserverConfig {
  ObserverKind kind = ObserverKind::MinMax;
  double averaging_constant = 0.01;  // MovingAverageMinMax (PyTorch's default)
  double percentile = 99.99;         // Histogram
  int64_t bins = 2048;               // Histogram
};

class Observer {
 public:
  explicit Observer(ObserverConfig config = {});
  // Any float32 tensor (NaNs are ignored).
  void observe(const Tensor& x);
  int64_t batches() const { return batches_; }
  int64_t count() const { return count_; }
  // MinMax: the extremes; MovingAverageMinMax: their averages; Histogram: the extremes.
  float min() const { return min_; }
  float max() const { return max_; }
  // Whether a negative value was seen (the activation then quantizes to int8, else uint8).
  bool is_signed() const { return negative_; }
  // The magnitude that maps to the largest quantized value; > 0. Throws if nothing was observed.
  float bound() const;

 private:
  void add_to_histogram(const float* x, int64_t n, float batch_absmax);
  ObserverConfig config_;
  int64_t batches_ = 0, count_ = 0;
  float min_ = 0, max_ = 0;
  bool negative_ = false;
  std::vector<int64_t> hist_;  // of |x| over [0, hist_top_)
  float hist_top_ = 0;
};

}  // namespace ember::quant

// Reading typed optimizer options out of a group's OptionMap.
#pragma once

#include <cmath>
#include <string>

#include "ember/optim/optimizer.h"

namespace ember::optim::detail {

// m[key], or an error naming the optimizer and the key.
inline double option(const OptionMap& m, const char* key, const char* optimizer) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "{}: param group has no option '{}'", optimizer, key);
  return it->second;
}

// A counter from a scheduler's state (a checkpoint, untrusted): a whole
// number in [-2^53, 2^53], so the conversion to int64 is defined and exact;
// anything else is an error naming the scheduler and the key.
inline int64_t state_count(double v, const std::string& key, const char* who) {
  EMBER_CHECK(std::isfinite(v) && v == std::floor(v) && std::fabs(v) <= 9007199254740992.0,
              "{}.load_state_dict: '{}' = {} is not a whole number", who, key, v);
  return static_cast<int64_t>(v);
}

// The 0-dim float32 step counter, created at 0 (PyTorch keeps step as a tensor).
Tensor new_step_tensor();
// Adds one to a step counter made by new_step_tensor and returns the new count.
double increment_step(Tensor& step);

}  // namespace ember::optim::detail

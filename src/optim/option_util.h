// Reading typed optimizer options out of a group's OptionMap.
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim::detail {

// m[key], or an error naming the optimizer and the key.
inline double option(const OptionMap& m, const char* key, const char* optimizer) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "{}: param group has no option '{}'", optimizer, key);
  return it->second;
}

// The 0-dim float32 step counter, created at 0 (PyTorch keeps step as a tensor).
Tensor new_step_tensor();
// Adds one to a step counter made by new_step_tensor and returns the new count.
double increment_step(Tensor& step);

}  // namespace ember::optim::detail

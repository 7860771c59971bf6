// Small helpers the op files share: shapes in error messages, broadcast
// shapes of per-channel vectors.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// "[2, 3]": a shape as PyTorch prints it in error messages.
inline std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// [1, C, 1, ...] so per-channel vectors broadcast over (N, C, *).
inline std::vector<int64_t> channel_shape(const Tensor& input) {
  std::vector<int64_t> s(static_cast<size_t>(input.dim()), 1);
  s[1] = input.size(1);
  return s;
}

}  // namespace ember

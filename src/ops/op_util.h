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

// A Scalar argument (alpha, beta, value, a threshold or bound) as PyTorch
// applies it to an op computing in dtype dt: cast to dt, so 2.7 on int64
// tensors is 2 (truncated towards zero) and the result stays integral;
// unchanged for floating and bool dtypes.
inline Scalar scalar_in(const Scalar& s, ScalarType dt) {
  if (dt == kBool || !is_integral(dt, false) || s.is_integral()) return s;
  return Scalar(s.to_long());
}

}  // namespace ember

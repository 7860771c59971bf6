// The reduction argument every loss shares: its check and its application.
#pragma once

#include <string>

#include "ember/core/error.h"
#include "ember/ops/reduction.h"

namespace ember::nn::functional {

inline void check_reduction(const std::string& r, const char* op, bool batchmean = false) {
  EMBER_CHECK(r == "none" || r == "mean" || r == "sum" || (batchmean && r == "batchmean"),
              "{}: reduction must be 'none', 'mean'{} or 'sum', got '{}'", op, batchmean ? ", 'batchmean'" : "", r);
}

inline Tensor reduce(const Tensor& loss, const std::string& r) {
  if (r == "mean") return mean(loss);
  if (r == "sum") return sum(loss);
  return loss;
}

}  // namespace ember::nn::functional

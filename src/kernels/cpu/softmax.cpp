// softmax / log_softmax along the last axis of contiguous rows (the ops layer
// moves other dims last): per row, m = max, s = sum exp(x - m), then
// exp(x - m) / s or x - m - log(s). float32 rows use Highway; others double.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/cpu/vec_reduce.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"

namespace ember {
namespace {

void softmax_row_f32(const float* x, float* y, int64_t n, bool log) {
  const float m = vec::max_f32(x, n);
  const float s = vec::exp_sum_f32(x, m, y, n);  // y = exp(x - m)
  if (log) {
    const float c = m + std::log(s);
    vec::binary_f32(vec::Binary::Sub, x, &c, y, n, 1);
  } else {
    const float inv = 1.0f / s;
    vec::binary_f32(vec::Binary::Mul, y, &inv, y, n, 1);
  }
}

// Reference path for every floating dtype (and the test oracle for f32).
template <typename T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(x[i]);
    m = (v > m || std::isnan(v)) && !std::isnan(m) ? v : m;
  }
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i]) - m);
  const double c = m + std::log(s);
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(x[i]);
    y[i] = static_cast<T>(log ? v - c : std::exp(v - m) / s);
  }
}

void softmax_kernel(const ReduceIter& it, bool log) {
  EMBER_ASSERT(it.inner == 1, "softmax: kernel expects the softmax dim last");
  const int64_t n = it.reduce;
  if (n == 0 || it.outer == 0) return;
  int64_t grain = std::max<int64_t>(1, kGrainSize / n);
  dispatch_floating(it.in_dtype, log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(it.in);
    T* out = static_cast<T*>(it.out);
    parallel_for(0, it.outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        if constexpr (std::is_same_v<T, float>)
          softmax_row_f32(in + o * n, out + o * n, n, log);
        else
          softmax_row(in + o * n, out + o * n, n, log);
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(softmax, CPU, softmax_kernel);

}  // namespace ember

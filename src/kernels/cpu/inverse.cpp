// Matrix inverse by Gauss-Jordan elimination with partial pivoting: the
// reference and production loop behind ember::inverse (float32, float64).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/core/error.h"
#include "kernels/linalg.h"

namespace ember {
namespace {

// Inverts one n x n row-major matrix into `out`, accumulating in double.
// Returns 0, or the 1-based column whose pivot (U's diagonal element in
// LAPACK's getrf, which picks the same rows) is exactly zero.
template <typename T>
int64_t invert_one(const T* in, T* out, int64_t n, std::vector<double>& a, std::vector<double>& inv) {
  const auto nn = static_cast<size_t>(n * n);
  a.assign(in, in + nn);
  inv.assign(nn, 0.0);
  for (int64_t i = 0; i < n; ++i) inv[static_cast<size_t>(i * n + i)] = 1.0;
  auto at = [n](std::vector<double>& m, int64_t r, int64_t c) -> double& { return m[static_cast<size_t>(r * n + c)]; };
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t r = k + 1; r < n; ++r)
      if (std::abs(at(a, r, k)) > std::abs(at(a, p, k))) p = r;
    // NaN compares false everywhere above: a NaN column keeps row k and the
    // NaN spreads through the result, as it does through LAPACK's.
    if (at(a, p, k) == 0.0) return k + 1;
    if (p != k)
      for (int64_t c = 0; c < n; ++c) {
        std::swap(at(a, p, c), at(a, k, c));
        std::swap(at(inv, p, c), at(inv, k, c));
      }
    const double d = 1.0 / at(a, k, k);
    for (int64_t c = 0; c < n; ++c) {
      at(a, k, c) *= d;
      at(inv, k, c) *= d;
    }
    for (int64_t r = 0; r < n; ++r) {
      const double f = at(a, r, k);
      // No skip for f == 0: 0 * NaN must spread a NaN as LAPACK's update does.
      if (r == k) continue;
      for (int64_t c = k; c < n; ++c) at(a, r, c) -= f * at(a, k, c);
      for (int64_t c = 0; c < n; ++c) at(inv, r, c) -= f * at(inv, k, c);
    }
  }
  std::transform(inv.begin(), inv.end(), out, [](double v) { return static_cast<T>(v); });
  return 0;
}

}  // namespace

InverseFailure invert_matrices(ScalarType dtype, const void* in, void* out, int64_t batch, int64_t n) {
  // The first singular matrix in batch order, whichever thread meets it.
  std::atomic<int64_t> first_bad{batch};
  std::vector<int64_t> pivots(static_cast<size_t>(batch), 0);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    const int64_t work = std::max<int64_t>(1, n * n * n);
    parallel_for(0, batch, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b0, int64_t b1) {
      std::vector<double> a, inv;
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t zero_pivot = invert_one(src + b * n * n, dst + b * n * n, n, a, inv);
        if (zero_pivot == 0) continue;
        pivots[static_cast<size_t>(b)] = zero_pivot;
        int64_t seen = first_bad.load();
        while (b < seen && !first_bad.compare_exchange_weak(seen, b)) {
        }
      }
    });
  };
  EMBER_CHECK(dtype == ScalarType::Float32 || dtype == ScalarType::Float64, "inverse: float32 or float64 only, got {}",
              to_string(dtype));
  if (dtype == ScalarType::Float64) run(double{});
  else run(float{});
  const int64_t bad = first_bad.load();
  if (bad == batch) return {};
  return {bad, pivots[static_cast<size_t>(bad)]};
}

}  // namespace ember

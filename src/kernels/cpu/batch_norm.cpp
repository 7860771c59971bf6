// Batch normalisation kernels: per-channel statistics, the affine apply and
// the training backward, each a pass or two over contiguous (N, C, inner)
// data instead of the dozen broadcast passes of the composite formula.
// Rows of `inner` values accumulate in T with 8 independent lanes (so the
// compiler vectorizes them) and rows add into double.
#include <cmath>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "kernels/nn.h"

namespace ember {
namespace {

constexpr int kLanes = 8;

template <typename T, typename F>
double row_sum(int64_t n, F&& term) {
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += term(i + j);
  double total = 0;
  for (; i < n; ++i) total += static_cast<double>(term(i));
  for (int j = 0; j < kLanes; ++j) total += static_cast<double>(acc[j]);
  return total;
}

template <typename T>
const T* row(const void* base, const BatchNormParams& p, int64_t n, int64_t c) {
  return static_cast<const T*>(base) + (n * p.c + c) * p.inner;
}

template <typename T>
void stats(const BatchNormParams& p, const void* x, double* mean, double* var) {
  const double m = static_cast<double>(p.n * p.inner);
  parallel_for(0, p.c, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0;
      for (int64_t n = 0; n < p.n; ++n) {
        const T* r = row<T>(x, p, n, c);
        s += row_sum<T>(p.inner, [r](int64_t i) { return r[i]; });
      }
      const double mu = s / m;
      // Second pass on centred values: no cancellation for large means.
      const T mu_t = static_cast<T>(mu);
      double ss = 0, shift = 0;
      for (int64_t n = 0; n < p.n; ++n) {
        const T* r = row<T>(x, p, n, c);
        ss += row_sum<T>(p.inner, [r, mu_t](int64_t i) { T d = r[i] - mu_t; return d * d; });
        shift += row_sum<T>(p.inner, [r, mu_t](int64_t i) { return r[i] - mu_t; });
      }
      // Correct for mu_t != mu (rounding to T): sum((x-a)^2) - (sum(x-a))^2/m.
      mean[c] = mu;
      var[c] = std::max(0.0, (ss - shift * shift / m) / m);
    }
  });
}

template <typename T>
void apply(const BatchNormParams& p, const void* x, const double* scale, const double* shift, void* y) {
  parallel_for(0, p.n * p.c, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r % p.c;
      const T a = static_cast<T>(scale[c]), b = static_cast<T>(shift[c]);
      const T* in = static_cast<const T*>(x) + r * p.inner;
      T* out = static_cast<T*>(y) + r * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) out[i] = in[i] * a + b;
    }
  });
}

template <typename T>
void backward(const BatchNormParams& p, const void* x, const void* dy, const double* mean, const double* invstd,
              const double* weight, void* dx, double* sum_dy, double* sum_dy_xhat) {
  const double m = static_cast<double>(p.n * p.inner);
  parallel_for(0, p.c, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T mu = static_cast<T>(mean[c]);
      double sg = 0, sgx = 0;
      for (int64_t n = 0; n < p.n; ++n) {
        const T* xr = row<T>(x, p, n, c);
        const T* gr = row<T>(dy, p, n, c);
        sg += row_sum<T>(p.inner, [gr](int64_t i) { return gr[i]; });
        sgx += row_sum<T>(p.inner, [xr, gr, mu](int64_t i) { return gr[i] * (xr[i] - mu); });
      }
      // Same rounding correction as in stats(): mu is mean[c] rounded to T.
      sgx += sg * (static_cast<double>(mu) - mean[c]);
      sum_dy[c] = sg;
      sum_dy_xhat[c] = sgx * invstd[c];
      if (!dx) continue;
      // dx = k * (dy - sg/m - (x - mean) * invstd^2 * sgx/m), k = w * invstd:
      // dx = k*dy + a*x + b, written as one multiply-add per element.
      const double w = weight ? weight[c] : 1.0, is = invstd[c];
      const double k = w * is;
      const double a = -k * is * is * sgx / m;
      const double b = -k * sg / m - a * mean[c];
      const T kt = static_cast<T>(k), at = static_cast<T>(a), bt = static_cast<T>(b);
      for (int64_t n = 0; n < p.n; ++n) {
        const T* xr = row<T>(x, p, n, c);
        const T* gr = row<T>(dy, p, n, c);
        T* out = static_cast<T*>(dx) + (n * p.c + c) * p.inner;
        for (int64_t i = 0; i < p.inner; ++i) out[i] = kt * gr[i] + at * xr[i] + bt;
      }
    }
  });
}

template <typename F>
void dispatch(ScalarType t, const char* op, F&& f) {
  if (t == kFloat32) return f(float{});
  if (t == kFloat64) return f(double{});
  EMBER_CHECK_TYPE(false, "{}: expected float32 or float64, got {}", op, to_string(t));
}

void stats_cpu(const BatchNormParams& p, const void* x, double* mean, double* var) {
  dispatch(p.dtype, "batch_norm", [&](auto v) { stats<decltype(v)>(p, x, mean, var); });
}
void apply_cpu(const BatchNormParams& p, const void* x, const double* scale, const double* shift, void* y) {
  dispatch(p.dtype, "batch_norm", [&](auto v) { apply<decltype(v)>(p, x, scale, shift, y); });
}
void backward_cpu(const BatchNormParams& p, const void* x, const void* dy, const double* mean, const double* invstd,
                  const double* weight, void* dx, double* sum_dy, double* sum_dy_xhat) {
  dispatch(p.dtype, "batch_norm_backward",
           [&](auto v) { backward<decltype(v)>(p, x, dy, mean, invstd, weight, dx, sum_dy, sum_dy_xhat); });
}

}  // namespace

EMBER_REGISTER_KERNEL(batch_norm_stats, CPU, stats_cpu);
EMBER_REGISTER_KERNEL(batch_norm_apply, CPU, apply_cpu);
EMBER_REGISTER_KERNEL(batch_norm_backward, CPU, backward_cpu);

}  // namespace ember

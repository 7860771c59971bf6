// var (Welford, with optional mean and sqrt), norm (p = 0, 1, 2, inf, -inf,
// general) and logsumexp: CPU kernels for floating inputs.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/reduce_loops.h"
#include "kernels/dispatch.h"

namespace ember {
namespace {

// Accumulators are double for every dtype: these reductions are not on the
// hot path, and PyTorch accumulates float var/norm in double too.
struct Welford {
  double mean = 0, m2 = 0;
  int64_t n = 0;
};

// finish() returns the accumulator itself; var_kernel post-processes it.
template <typename T>
struct WelfordReducer {
  using in_t = T;
  using acc_t = Welford;
  using out_t = Welford;
  Welford init() const { return {}; }
  Welford step(Welford a, T x) const {
    double v = static_cast<double>(x);
    a.n += 1;
    double delta = v - a.mean;
    a.mean += delta / static_cast<double>(a.n);
    a.m2 += delta * (v - a.mean);
    return a;
  }
  // Chan et al.'s parallel combination.
  Welford merge(Welford a, Welford b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    int64_t n = a.n + b.n;
    double delta = b.mean - a.mean;
    double nb_over_n = static_cast<double>(b.n) / static_cast<double>(n);
    return {a.mean + delta * nb_over_n,
            a.m2 + b.m2 + delta * delta * static_cast<double>(a.n) * nb_over_n, n};
  }
  Welford finish(Welford a) const { return a; }
};

void var_kernel(const ReduceIter& it, const ReduceParams& p) {
  dispatch_floating(it.in_dtype, "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t count = it.outer * it.inner;
    std::vector<Welford> acc(static_cast<size_t>(count));
    ReduceIter tmp = it;
    tmp.out = acc.data();
    reduce_kernel(tmp, WelfordReducer<T>{});
    T* out = static_cast<T*>(it.out);
    T* mean = static_cast<T*>(it.out2);
    // An empty reduction has mean nan (0/0), like torch.
    const double dof_n = static_cast<double>(it.reduce) - p.correction;
    for (int64_t i = 0; i < count; ++i) {
      double v = acc[i].m2 / std::max(0.0, dof_n);
      if (it.reduce == 0) v = std::numeric_limits<double>::quiet_NaN();
      out[i] = static_cast<T>(p.take_sqrt ? std::sqrt(v) : v);
      if (mean)
        mean[i] = static_cast<T>(it.reduce == 0 ? std::numeric_limits<double>::quiet_NaN() : acc[i].mean);
    }
  });
}

// kind: 0 = count non-zeros, 1 = sum |x|, 2 = sqrt(sum x^2), 3 = max |x|,
// 4 = min |x|, 5 = (sum |x|^p)^(1/p).
template <typename T>
struct NormReducer {
  using in_t = T;
  using acc_t = double;
  using out_t = T;
  int kind = 2;
  double p = 2;
  double init() const {
    if (kind == 3) return 0;  // |x| >= 0, so 0 is the identity of max |x|
    if (kind == 4) return std::numeric_limits<double>::infinity();
    return 0;
  }
  double merge(double a, double b) const {
    if (kind != 3 && kind != 4) return a + b;
    if (std::isnan(a)) return a;  // NaN propagates through max |x| and min |x|
    return std::isnan(b) || (kind == 3 ? b > a : b < a) ? b : a;
  }
  double step(double a, T x) const {
    double v = std::fabs(static_cast<double>(x));
    switch (kind) {
      case 0: return a + (v != 0 ? 1.0 : 0.0);
      case 1: return a + v;
      case 2: return a + v * v;
      case 5: return a + std::pow(v, p);
      default: return merge(a, v);
    }
  }
  T finish(double a) const {
    if (kind == 2) return static_cast<T>(std::sqrt(a));
    if (kind == 5) return static_cast<T>(std::pow(a, 1.0 / p));
    return static_cast<T>(a);
  }
};

int norm_kind(double p) {
  if (p == 0) return 0;
  if (p == 1) return 1;
  if (p == 2) return 2;
  if (p == std::numeric_limits<double>::infinity()) return 3;
  if (p == -std::numeric_limits<double>::infinity()) return 4;
  return 5;
}

void norm_kernel(const ReduceIter& it, const ReduceParams& p) {
  dispatch_floating(it.in_dtype, "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    NormReducer<T> r;
    r.kind = norm_kind(p.p);
    r.p = p.p;
    reduce_kernel(it, r);
  });
}

// logsumexp = m + log(sum exp(x - m)) with m = max x; an infinite m is
// replaced by 0 so rows of -inf give -inf and a +inf gives +inf (as torch).
template <typename T>
void logsumexp_typed(const ReduceIter& it) {
  const T* in = static_cast<const T*>(it.in);
  T* out = static_cast<T*>(it.out);
  const int64_t n = it.reduce, inner = it.inner;
  parallel_for(0, it.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t idx = b; idx < e; ++idx) {
                   const T* x = in + (idx / inner) * n * inner + idx % inner;
                   double m = -std::numeric_limits<double>::infinity();
                   for (int64_t r = 0; r < n; ++r) {
                     double v = static_cast<double>(x[r * inner]);
                     if (v > m || std::isnan(v)) m = v;
                     if (std::isnan(m)) break;
                   }
                   if (std::isinf(m)) m = 0;
                   double s = 0;
                   for (int64_t r = 0; r < n; ++r) s += std::exp(static_cast<double>(x[r * inner]) - m);
                   out[idx] = static_cast<T>(m + std::log(s));
                 }
               });
}

void logsumexp_kernel(const ReduceIter& it, const ReduceParams&) {
  dispatch_floating(it.in_dtype, "logsumexp", [&](auto tag) {
    logsumexp_typed<typename decltype(tag)::type>(it);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(var, CPU, var_kernel);
EMBER_REGISTER_KERNEL(norm, CPU, norm_kernel);
EMBER_REGISTER_KERNEL(logsumexp, CPU, logsumexp_kernel);

}  // namespace ember

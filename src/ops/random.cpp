// Random factories and in-place samplers on a Philox Generator.
//
// Note [random determinism]: element i of a draw uses Philox block
// (seed, base + i), with `base` reserved from the generator once per op (n
// blocks for n elements): words r0, r1 make its uniform or integer, r2, r3 a
// normal's second uniform. Results do not depend on thread count, on
// contiguity or on the SIMD width that computed the blocks.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ember/core/parallel.h"

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"
#include "kernels/cpu/philox_vec.h"
#include "kernels/dispatch.h"
#include "ops/random_internal.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {

Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

// A traced graph would replay the same numbers every run: refuse instead.
void refuse_tracing() {
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->unsupported("random", "random numbers cannot be traced (dropout in training mode, rand, randn...); trace in "
                              "eval mode or pass the random tensor as an input");
}

// Fills the contiguous buffer `t`: element i gets f(w01, w23), the words of
// Philox block (seed, base + i) (w23 only when kBoth). The blocks come in
// SIMD runs (kernels/cpu/philox_vec.h), the same numbers as philox4x32's.
template <typename T, bool kBoth = false, typename F>
void fill_random(Tensor& t, Generator* gen, const F& f) {
  refuse_tracing();
  Generator& g = gen_or_default(gen);
  int64_t n = t.numel();
  uint64_t base = g.reserve(static_cast<uint64_t>(n));
  uint64_t seed = g.seed();
  T* p = static_cast<T*>(t.data_ptr());
  parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
    constexpr int64_t kRun = 256;
    uint64_t w01[kRun], w23[kRun];
    for (int64_t i = b; i < e; i += kRun) {
      const int64_t m = std::min(kRun, e - i);
      vec::philox_bits(seed, base + static_cast<uint64_t>(i), m, w01, kBoth ? w23 : nullptr);
      for (int64_t j = 0; j < m; ++j) p[i + j] = f(w01[j], kBoth ? w23[j] : 0);
    }
  });
}

double uniform01(uint64_t w01) { return uint64_to_uniform_double(w01); }

double standard_normal(uint64_t w01, uint64_t w23) {
  // Box-Muller; 1 - u keeps the log argument in (0, 1].
  double u1 = 1.0 - uint64_to_uniform_double(w01);
  double u2 = uint64_to_uniform_double(w23);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Draws into a contiguous temporary when t is strided, then copies back.
template <typename F>
Tensor& fill_any(Tensor& t, const F& fill) {
  if (t.is_contiguous()) {
    fill(t);
  } else {
    Tensor tmp = empty(t.sizes(), t.dtype());
    fill(tmp);
    copy_(t, tmp);
  }
  t.bump_version();
  return t;
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to, Generator* gen) {
  EMBER_CHECK(from <= to, "uniform_: expects from <= to, but got from={} to={}", from, to);
  return fill_any(*this, [&](Tensor& t) {
    dispatch_floating(t.dtype(), "uniform_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      fill_random<T>(t, gen, [&](uint64_t w01, uint64_t) {
        return static_cast<T>(static_cast<opmath_t<T>>(from + (to - from) * uniform01(w01)));
      });
    });
  });
}

Tensor& Tensor::normal_(double mean, double std, Generator* gen) {
  EMBER_CHECK(std >= 0, "normal_: expects std >= 0.0, but found std {}", std);
  return fill_any(*this, [&](Tensor& t) {
    dispatch_floating(t.dtype(), "normal_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      fill_random<T, true>(t, gen, [&](uint64_t w01, uint64_t w23) {
        return static_cast<T>(static_cast<opmath_t<T>>(mean + std * standard_normal(w01, w23)));
      });
    });
  });
}

Tensor& Tensor::bernoulli_(double p, Generator* gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_: expects 0 <= p <= 1, but got p={}", p);
  return fill_any(*this, [&](Tensor& t) {
    dispatch_all(t.dtype(), "bernoulli_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      fill_random<T>(t, gen, [&](uint64_t w01, uint64_t) {
        return static_cast<T>(static_cast<opmath_t<T>>(uniform01(w01) < p ? 1 : 0));
      });
    });
  });
}

Tensor& Tensor::random_(int64_t from, int64_t to, Generator* gen) {
  EMBER_CHECK(from < to, "random_: expects 'from' to be less than 'to', but got from={} >= to={}", from, to);
  uint64_t range = static_cast<uint64_t>(to - from);
  return fill_any(*this, [&](Tensor& t) {
    dispatch_numeric(t.dtype(), "random_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      fill_random<T>(t, gen, [&](uint64_t w01, uint64_t) {
        return static_cast<T>(static_cast<opmath_t<T>>(from + static_cast<int64_t>(w01 % range)));
      });
    });
  });
}

Tensor rand(IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  Tensor t = empty(sizes, opts);
  t.uniform_(0, 1, gen);
  return t;
}

Tensor randn(IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  Tensor t = empty(sizes, opts);
  t.normal_(0, 1, gen);
  return t;
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  if (!opts.dtype_) opts.dtype_ = kInt64;
  Tensor t = empty(sizes, opts);
  t.random_(low, high, gen);
  return t;
}

Tensor randperm(int64_t n, TensorOptions opts, Generator* gen) {
  EMBER_CHECK(n >= 0, "randperm: n must be non-negative, got {}", n);
  // Fisher-Yates driven by one uniform draw per position.
  Tensor keys = empty({n}, kFloat64);
  keys.uniform_(0, 1, gen);
  const double* k = keys.data_ptr<double>();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(k[i] * static_cast<double>(i + 1));
    std::swap(perm[i], perm[std::min(j, i)]);
  }
  if (!opts.dtype_) opts.dtype_ = kInt64;
  return tensor(perm, {}, opts);
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  EMBER_CHECK_TYPE(is_floating_point(p.dtype()), "bernoulli: expected a floating-point probability tensor, got {}",
                   to_string(p.dtype()));
  Tensor u = empty(p.sizes(), p.dtype());
  u.uniform_(0, 1, gen);
  return lt(u, p).to(p.dtype());
}

Tensor bernoulli(const Tensor& like, double p, Generator* gen) {
  Tensor t = empty(like.sizes(), like.dtype());
  t.bernoulli_(p, gen);
  return t;
}

namespace detail {

DropoutKeep dropout_keep(double p) {
  // For an integer k, k < q * 2^53 iff k < ceil(q * 2^53), and q * 2^53 is
  // exact (a power-of-two scaling).
  const double q = 1.0 - p;
  return {static_cast<uint64_t>(std::ceil(q * 9007199254740992.0)), 1.0f / static_cast<float>(q)};
}

std::pair<Tensor, Tensor> dropout_f32(const Tensor& x, double p, Generator* gen) {
  refuse_tracing();
  Generator& g = gen_or_default(gen);
  const int64_t n = x.numel();
  const uint64_t base = g.reserve(static_cast<uint64_t>(n));
  const uint64_t seed = g.seed();
  const DropoutKeep keep = dropout_keep(p);
  Tensor y = empty(x.sizes(), kFloat32), noise = empty(x.sizes(), kFloat32);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  float* pn = noise.data_ptr<float>();
  parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
    vec::dropout_f32(seed, base + static_cast<uint64_t>(b), keep.keep_below, keep.scale, px + b, py + b, pn + b,
                     e - b);
  });
  return {std::move(y), std::move(noise)};
}

}  // namespace detail
}  // namespace ember

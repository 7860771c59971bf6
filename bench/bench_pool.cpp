// W1's max pools (MaxPool2d(2) on [128,32,28,28] and [128,64,14,14], float32,
// 2 threads): forward without grad, forward with indices (training) and
// forward+backward. Twin: bench/torch/pool.py. Run with
// --benchmark_repetitions=5 and compare medians.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ember/core/grad_mode.h"
#include "bench_util.h"
#include "ember/ember.h"
#include "ember/ops/nn_functional.h"

using namespace ember;

namespace {

struct PoolShape {
  int64_t n, c, hw;
};

void set_counters(benchmark::State& state, const PoolShape& s) {
  state.counters["img/s"] = benchmark::Counter(static_cast<double>(s.n), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_max_pool_forward(benchmark::State& state, PoolShape s) {
  bench::default_threads();
  Tensor x = randn({s.n, s.c, s.hw, s.hw});
  NoGradGuard no_grad;
  for (auto _ : state) {
    Tensor y = max_pool2d(x, {2});
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_counters(state, s);
}

// The training forward: values and argmax indices.
void BM_max_pool_forward_indices(benchmark::State& state, PoolShape s) {
  bench::default_threads();
  Tensor x = randn({s.n, s.c, s.hw, s.hw});
  NoGradGuard no_grad;
  for (auto _ : state) {
    auto [y, i] = max_pool2d_with_indices(x, {2});
    benchmark::DoNotOptimize(i.data_ptr());
  }
  set_counters(state, s);
}

void BM_max_pool_forward_backward(benchmark::State& state, PoolShape s) {
  bench::default_threads();
  Tensor x = randn({s.n, s.c, s.hw, s.hw}).requires_grad_(), g = randn({s.n, s.c, s.hw / 2, s.hw / 2});
  for (auto _ : state) {
    x.set_grad(Tensor());
    max_pool2d(x, {2}).backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
  }
  set_counters(state, s);
}

constexpr PoolShape kW1Pool1{128, 32, 28};
constexpr PoolShape kW1Pool2{128, 64, 14};

}  // namespace

BENCHMARK_CAPTURE(BM_max_pool_forward, w1_pool1, kW1Pool1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_indices, w1_pool1, kW1Pool1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_backward, w1_pool1, kW1Pool1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward, w1_pool2, kW1Pool2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_indices, w1_pool2, kW1Pool2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_backward, w1_pool2, kW1Pool2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

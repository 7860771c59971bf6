// W6 (Conv2d 64->64, 3x3, pad 1, batch 64, 32x32: forward and forward+backward
// img/s) and W1's CNN layers at batch 128 (its two convs and max pools).
// Twin: /work/shared/anchors/w6_conv.py --threads 2 (run alternately, compare
// medians). Run with --benchmark_repetitions=5. The *_bf16 rows run under
// autocast (native bf16 where the CPU has AVX512_BF16/AMX; set
// EMBER_AUTOCAST_BF16=emulated for the rounding path); compare them with
// the float32 rows of the same run (--benchmark_enable_random_interleaving).
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ember/core/autocast.h"
#include "ember/core/grad_mode.h"
#include "bench_util.h"
#include "ember/ember.h"
#include "ember/ops/nn_functional.h"

using namespace ember;

namespace {

struct ConvShape {
  int64_t n, c_in, c_out, hw;
};

void set_counters(benchmark::State& state, const ConvShape& s, double flop_factor) {
  double flop = 2.0 * s.n * s.c_out * s.hw * s.hw * s.c_in * 9 * flop_factor;
  state.counters["img/s"] = benchmark::Counter(static_cast<double>(s.n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS"] = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_conv_forward(benchmark::State& state, ConvShape s, bool autocast = false) {
  bench::default_threads();
  AutocastGuard guard(autocast);
  Tensor x = randn({s.n, s.c_in, s.hw, s.hw}), w = randn({s.c_out, s.c_in, 3, 3}) * 0.05, b = randn({s.c_out});
  NoGradGuard no_grad;
  for (auto _ : state) {
    Tensor y = conv2d(x, w, b, {1}, {1});
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_counters(state, s, 1);
}

// As the twin: grad for weight, bias and (when input_grad) the input.
void BM_conv_forward_backward(benchmark::State& state, ConvShape s, bool input_grad, bool autocast = false) {
  bench::default_threads();
  Tensor x = randn({s.n, s.c_in, s.hw, s.hw}), g = randn({s.n, s.c_out, s.hw, s.hw});
  Tensor w = (randn({s.c_out, s.c_in, 3, 3}) * 0.05).requires_grad_(), b = randn({s.c_out}).requires_grad_();
  if (input_grad) x.requires_grad_();
  for (auto _ : state) {
    w.set_grad(Tensor());
    b.set_grad(Tensor());
    x.set_grad(Tensor());
    Tensor y;
    {
      AutocastGuard guard(autocast);  // the forward only, as torch.autocast is used
      y = conv2d(x, w, b, {1}, {1});
    }
    y.backward(g);
    benchmark::DoNotOptimize(w.grad().data_ptr());
  }
  set_counters(state, s, input_grad ? 3 : 2);
}

// W1's pool: MaxPool2d(2) after each conv, forward+backward.
void BM_max_pool_forward_backward(benchmark::State& state, ConvShape s) {
  bench::default_threads();
  Tensor x = randn({s.n, s.c_out, s.hw, s.hw}).requires_grad_(), g = randn({s.n, s.c_out, s.hw / 2, s.hw / 2});
  for (auto _ : state) {
    x.set_grad(Tensor());
    max_pool2d(x, {2}).backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
  }
  state.counters["img/s"] = benchmark::Counter(static_cast<double>(s.n), benchmark::Counter::kIsIterationInvariantRate);
}

constexpr ConvShape kW6{64, 64, 64, 32};
constexpr ConvShape kW1Conv1{128, 1, 32, 28};
constexpr ConvShape kW1Conv2{128, 32, 64, 14};

}  // namespace

BENCHMARK_CAPTURE(BM_conv_forward, w6, kW6)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward_backward, w6, kW6, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward, w1_conv1, kW1Conv1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward_backward, w1_conv1, kW1Conv1, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward, w1_conv2, kW1Conv2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward_backward, w1_conv2, kW1Conv2, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward, w6_bf16, kW6, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward_backward, w6_bf16, kW6, true, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward, w1_conv2_bf16, kW1Conv2, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_conv_forward_backward, w1_conv2_bf16, kW1Conv2, true, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_backward, w1_pool1, kW1Conv1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_max_pool_forward_backward, w1_pool2, kW1Conv2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

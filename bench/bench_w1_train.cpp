// W1's training step (the zoo `cnn`, Adam 1e-3, batch 128 on a fixed random
// batch: forward, cross-entropy, backward, Adam step, zero_grad) in float32
// and under bf16 autocast (native where the CPU has AVX512_BF16/AMX;
// EMBER_AUTOCAST_BF16=emulated forces the rounding path). The whole-epoch
// figure is `ember train configs/bench/w1_fmnist_cnn.yaml`
// [train.mixed_precision=bf16]; this isolates the step from data loading and
// evaluation. Run with --benchmark_repetitions=5
// --benchmark_enable_random_interleaving and compare medians of the two rows
// (on a loaded machine also the CPU time at OMP_NUM_THREADS=1).
#include <benchmark/benchmark.h>

#include "bench_util.h"
#include "ember/core/autocast.h"
#include "ember/ember.h"
#include "ember/nn/loss.h"
#include "ember/optim/adam.h"
#include "ember/train/models.h"

using namespace ember;

namespace {

void BM_w1_step(benchmark::State& state, bool autocast) {
  bench::default_threads();
  manual_seed(0);
  train::CNN model{train::CNNOptions{}};
  model.train();
  optim::Adam opt(model.parameters(), {.lr = 1e-3});
  const int64_t batch = 128;
  Tensor x = randn({batch, 1, 28, 28}), y = randint(0, 10, {batch});
  for (auto _ : state) {
    Tensor loss;
    {
      AutocastGuard guard(autocast);  // as the Trainer: forward and loss under autocast
      loss = nn::functional::cross_entropy(model.forward(x), y);
    }
    loss.backward();
    opt.step();
    opt.zero_grad();
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  state.counters["img/s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_w1_step, f32, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_w1_step, bf16, true)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

// W7: LSTM(64 -> 128, 1 layer, batch_first), batch 32, seq 50, forward +
// backward steps/s (loss = output.sum()), full length and with random
// lengths 5..50 per step (padded batch + lengths). Twin:
// /work/shared/anchors/w7_lstm.py --threads 2 (run alternately, compare
// medians). Run with --benchmark_repetitions=5.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "bench_util.h"
#include "ember/ember.h"
#include "ember/nn/rnn.h"

using namespace ember;

namespace {

constexpr int64_t kBatch = 32, kSeq = 50, kInput = 64, kHidden = 128;

void BM_lstm_forward_backward(benchmark::State& state, bool packed) {
  bench::default_threads();
  manual_seed(0);
  nn::LSTM lstm(kInput, kHidden, {.batch_first = true});
  Tensor x = randn({kBatch, kSeq, kInput});
  for (auto _ : state) {
    lstm.zero_grad(true);
    Tensor out;
    if (packed) {
      // Drawn every step, as the twin does (its packing cost is timed too).
      Tensor lengths = randint(5, kSeq + 1, {kBatch}, kInt64);
      out = lstm.forward(x, lengths, {}).first;
    } else {
      out = lstm.forward(x).first;
    }
    out.sum().backward();
    benchmark::DoNotOptimize(lstm.weight_hh(0).grad().data_ptr());
  }
  state.counters["steps/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_lstm_forward_backward, full, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_lstm_forward_backward, packed, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

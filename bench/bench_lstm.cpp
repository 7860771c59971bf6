// W7: LSTM(64 -> 128, 1 layer, batch_first), batch 32, seq 50, forward +
// backward steps/s (loss = output.sum()), full length and with random
// lengths 5..50 per step (padded batch + lengths). Twin:
// /work/shared/anchors/w7_lstm.py --threads 2 (run alternately, compare
// medians). Run with --benchmark_repetitions=5.
//
// gru_train_step: the small recurrent training step of issue 21's shared-
// machine measurement (GRU 32 -> 64, batch 16, seq 20, a Linear head,
// cross-entropy, Adam): hundreds of small parallel regions per step, so it
// shows what barrier waits cost when another process holds a core.
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

void BM_gru_train_step(benchmark::State& state) {
  bench::default_threads();
  manual_seed(0);
  auto gru = std::make_shared<nn::GRU>(32, 64, nn::RNNOptions{.batch_first = true});
  auto head = std::make_shared<nn::Linear>(64, 10);
  std::vector<Tensor> params = gru->parameters();
  for (const Tensor& p : head->parameters()) params.push_back(p);
  optim::Adam opt(params, 1e-3);
  Tensor x = randn({16, 20, 32}), y = randint(0, 10, {16});
  for (auto _ : state) {
    opt.zero_grad();
    Tensor h = gru->forward(x).first.select(1, -1);
    Tensor loss = nn::functional::cross_entropy(head->forward(h), y);
    loss.backward();
    opt.step();
  }
  state.counters["steps/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_gru_train_step)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_lstm_forward_backward, full, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_lstm_forward_backward, packed, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

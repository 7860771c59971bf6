// W8: TransformerEncoder train step (4 layers, d_model 256, 4 heads, ff 1024,
// dropout 0.1 in train mode, batch_first, batch 16, seq 128): forward,
// loss = output.pow(2).mean(), backward, AdamW step, zero_grad — steps/s.
// Twin: /work/shared/anchors/w8_transformer.py --threads 2 (run alternately,
// compare medians). Run with --benchmark_repetitions=5.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "bench_util.h"
#include "ember/ember.h"
#include "ember/nn/transformer.h"
#include "ember/optim/adam.h"

using namespace ember;

namespace {

void BM_transformer_train_step(benchmark::State& state) {
  bench::default_threads();
  manual_seed(0);
  nn::TransformerEncoderLayer layer(256, 4, 1024, 0.1, "relu", 1e-5, /*batch_first=*/true);
  nn::TransformerEncoder model(layer, 4);
  model.train();
  optim::AdamW opt(model.parameters(), {.lr = 1e-4});
  Tensor x = randn({16, 128, 256});
  auto step = [&] {
    Tensor loss = mean(pow(model.forward(x), 2));
    loss.backward();
    opt.step();
    opt.zero_grad(true);
  };
  for (int i = 0; i < 2; ++i) step();  // warm-up, like the twin
  for (auto _ : state) step();
  state.counters["steps/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

// W8's pieces, forward + backward on one layer's activations: LayerNorm over
// [16 * 128, 256], GELU (an encoder with activation="gelu") and dropout over
// the feed-forward's [16 * 128, 1024] (docs/performance.md, "W8").
template <typename F>
void fwd_bwd(benchmark::State& state, std::vector<int64_t> shape, F f) {
  bench::default_threads();
  manual_seed(0);
  Tensor x = randn(shape).requires_grad_(true), dy = randn(shape);
  for (auto _ : state) {
    f(x).backward(dy);
    x.set_grad(Tensor());
  }
}

void BM_layer_norm_fwd_bwd(benchmark::State& state) {
  Tensor w = ones({256}).requires_grad_(true), b = zeros({256}).requires_grad_(true);
  fwd_bwd(state, {16 * 128, 256}, [&](const Tensor& x) { return layer_norm(x, {256}, w, b, 1e-5); });
}
void BM_gelu_fwd_bwd(benchmark::State& state) {
  fwd_bwd(state, {16 * 128, 1024}, [](const Tensor& x) { return gelu(x); });
}
void BM_dropout_fwd_bwd(benchmark::State& state) {
  fwd_bwd(state, {16 * 128, 1024}, [](const Tensor& x) { return dropout(x, 0.1, true); });
}

// Attention over a long sequence in training: scaled_dot_product_attention
// forward + backward, [8 (batch * heads), 2048, 64], dropout 0.1. Above
// kAttentionTile keys the blocked kernel runs and keeps no [8, 2048, 2048]
// matrix (128 MiB each for the probabilities and the dropout mask); compare
// peak RSS with /usr/bin/time -v --benchmark_filter=attention_long.
void BM_attention_long_fwd_bwd(benchmark::State& state) {
  bench::default_threads();
  manual_seed(0);
  Tensor q = randn({8, 2048, 64}).requires_grad_(true), k = randn({8, 2048, 64}).requires_grad_(true),
         v = randn({8, 2048, 64}).requires_grad_(true), dy = randn({8, 2048, 64});
  for (auto _ : state) {
    scaled_dot_product_attention(q, k, v, Tensor(), 0.1).backward(dy);
    for (Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());
  }
}

BENCHMARK(BM_transformer_train_step)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
BENCHMARK(BM_layer_norm_fwd_bwd)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_gelu_fwd_bwd)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_dropout_fwd_bwd)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_attention_long_fwd_bwd)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

BENCHMARK_MAIN();

// Reduction throughput on float32 (2 threads): sum over all elements and over
// the last dim for 1..16 M floats, a [4096, 4096] sum over dim 0 (outer,
// accumulating rows) and dim 1 (inner), amax, and a last-dim softmax.
// bench/torch/reduction.py is the PyTorch twin. Bytes/s count bytes read.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ember/ember.h"

using namespace ember;

namespace {

// 2 threads like the PyTorch twin; EMBER_BENCH_THREADS overrides.
void set_threads() {
  static bool done = [] {
    const char* env = std::getenv("EMBER_BENCH_THREADS");
    set_num_threads(env ? std::atoi(env) : 2);
    return true;
  }();
  (void)done;
}

void BM_sum_all(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum().data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 4);
}

// Rows of 1024: [n / 1024, 1024].sum(1).
void BM_sum_lastdim(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum({1}).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 4);
}

// [4096, 4096].sum(dim) for dim = range(0).
void BM_sum_4096_dim(benchmark::State& state) {
  set_threads();
  int64_t dim = state.range(0);
  Tensor a = rand({4096, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum({dim}).data_ptr());
  state.SetBytesProcessed(state.iterations() * 4096 * 4096 * 4);
}

void BM_amax_all(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize(amax(a).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 4);
}

void BM_softmax_lastdim(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = randn({n / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(a.softmax(1).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 8);
}

}  // namespace

BENCHMARK(BM_sum_all)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->UseRealTime();
BENCHMARK(BM_sum_lastdim)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->UseRealTime();
BENCHMARK(BM_sum_4096_dim)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_amax_all)->Arg(1 << 22)->UseRealTime();
BENCHMARK(BM_softmax_lastdim)->Arg(1 << 22)->UseRealTime();

BENCHMARK_MAIN();

// Elementwise throughput on 1..16 M floats next to a plain copy (the memory
// bandwidth bound): add, mul, exp, and a broadcast add. Bytes/s counters
// count every byte read and written.
#include <benchmark/benchmark.h>

#include <cstring>

#include "ember/ember.h"

using namespace ember;

namespace {

void set_threads() {
  static bool done = [] {
    set_num_threads(2);
    return true;
  }();
  (void)done;
}

void BM_copy(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n}), out = empty({n});
  for (auto _ : state) {
    out.copy_(a);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_memcpy(benchmark::State& state) {
  int64_t n = state.range(0);
  std::vector<float> a(n, 1.0f), out(n);
  for (auto _ : state) {
    std::memcpy(out.data(), a.data(), n * sizeof(float));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_add(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n}), b = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize((a + b).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 12);
}

void BM_mul(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n}), b = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize((a * b).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 12);
}

void BM_exp(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n});
  for (auto _ : state) benchmark::DoNotOptimize(a.exp().data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_add_inplace(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n}), b = rand({n});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 12);
}

void BM_add_broadcast_row(benchmark::State& state) {
  set_threads();
  int64_t n = state.range(0);
  Tensor a = rand({n / 1024, 1024}), b = rand({1024});
  for (auto _ : state) benchmark::DoNotOptimize((a + b).data_ptr());
  state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_add_1elem(benchmark::State& state) {
  set_threads();
  Tensor a = ones({1}), b = ones({1});
  for (auto _ : state) benchmark::DoNotOptimize((a + b).data_ptr());
}

}  // namespace

#define SIZES RangeMultiplier(4)->Range(1 << 20, 1 << 24)->UseRealTime()
BENCHMARK(BM_memcpy)->SIZES;
BENCHMARK(BM_copy)->SIZES;
BENCHMARK(BM_add)->SIZES;
BENCHMARK(BM_add_inplace)->SIZES;
BENCHMARK(BM_mul)->SIZES;
BENCHMARK(BM_exp)->SIZES;
BENCHMARK(BM_add_broadcast_row)->SIZES;
BENCHMARK(BM_add_1elem);
BENCHMARK_MAIN();

// W4: square GEMM GFLOP/s (2 n^3 per call), Ember's mm next to oneDNN's
// matmul primitive called directly (no Ember), so the difference is Ember's
// overhead: float32 n = 64..2048, bfloat16 n = 1024, 2048, and float32
// tensors under autocast (`autocast` rows: native bf16 products where the CPU
// has AVX512_BF16/AMX, the emulated rounding elsewhere or with
// EMBER_AUTOCAST_BF16=emulated). Twin: bench/torch/matmul.py. Run with
// --benchmark_repetitions=5 --benchmark_enable_random_interleaving and read
// medians.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>

#include "bench_util.h"
#include "ember/core/autocast.h"
#include "ember/ember.h"

using namespace ember;

namespace {

void set_gflops(benchmark::State& state, int64_t n) {
  state.counters["GFLOPS"] = benchmark::Counter(2e-9 * static_cast<double>(n * n * n),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ember_mm(benchmark::State& state, ScalarType dt, bool autocast = false) {
  bench::default_threads();
  AutocastGuard guard(autocast);
  int64_t n = state.range(0);
  Tensor a = randn({n, n}).to(dt), b = randn({n, n}).to(dt);
  for (auto _ : state) {
    Tensor c = mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, n);
}

// The same GEMM straight through oneDNN: one primitive, created outside the
// timed loop, buffers allocated once.
void BM_dnnl_matmul(benchmark::State& state, ScalarType dt) {
  bench::default_threads();
  int64_t n = state.range(0);
  using dnnl::memory;
  auto ddt = dt == kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  memory::desc md({n, n}, ddt, memory::format_tag::ab);
  dnnl::matmul prim;
  try {
    prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no matmul for this dtype on this CPU");
    return;
  }
  Tensor a = randn({n, n}).to(dt), b = randn({n, n}).to(dt), c = empty({n, n}, dt);
  memory ma(md, eng, a.data_ptr()), mb(md, eng, b.data_ptr()), mc(md, eng, c.data_ptr());
  for (auto _ : state) {
    prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    stream.wait();
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, n);
}

void f32_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {8, 64, 128, 256, 512, 1024, 2048}) b->Arg(n);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}
void bf16_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1024, 2048}) b->Arg(n);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_ember_mm, f32, kFloat32)->Apply(f32_sizes);
BENCHMARK_CAPTURE(BM_dnnl_matmul, f32, kFloat32)->Apply(f32_sizes);
BENCHMARK_CAPTURE(BM_ember_mm, bf16, kBFloat16)->Apply(bf16_sizes);
BENCHMARK_CAPTURE(BM_dnnl_matmul, bf16, kBFloat16)->Apply(bf16_sizes);
BENCHMARK_CAPTURE(BM_ember_mm, autocast, kFloat32, true)->Apply(bf16_sizes);

BENCHMARK_MAIN();

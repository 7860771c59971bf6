// W5 on any x86-64 CPU: the machine's FP32 FMA peak, the ceiling W4 and W6
// are measured against. The anchor (../shared/anchors/w5_peak.cpp) starts with
// its AVX-512 kernel and dies on AVX2-only CPUs; this probe measures the
// widest FMA the CPU has, the same way: independent accumulator chains
// (more than FMA latency x FMA pipes, fewer than the vector registers),
// 1 and 2 threads, median of 5 runs. A measurement probe, not a kernel, so it
// uses intrinsics with target attributes rather than Highway: the point is
// one exact instruction mix.
//
//   bench_peak            prints one JSON line, like the anchor:
//   {"workload": "w5_peak_ember", "figures": {"avx2_2thr_gflops": {"median": ...}, ...}}
#include <immintrin.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace {

constexpr long kIters = 50'000'000;  // FMA rounds per thread per run
constexpr int kRuns = 5;

using ember::bench::stat;
using ember::bench::Stat;
constexpr auto now_s = ember::bench::seconds;

volatile float g_sink;

// 12 chains of 8-lane FMAs: AVX2 has 16 ymm registers, FMA latency 4-5 x 2
// pipes needs at least 8-10 chains in flight.
constexpr int kAvx2Chains = 12;
__attribute__((target("avx2,fma"))) float fma_avx2(long iters, float seed) {
  __m256 acc[kAvx2Chains];
  for (int i = 0; i < kAvx2Chains; ++i) acc[i] = _mm256_set1_ps(seed + static_cast<float>(i));
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kAvx2Chains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+x"(a));  // the loop must not be folded away
  }
  __m256 s = acc[0];
  for (int i = 1; i < kAvx2Chains; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float r = 0;
  for (float v : lanes) r += v;
  return r;
}

// 16 chains of 16-lane FMAs (32 zmm registers).
constexpr int kAvx512Chains = 16;
__attribute__((target("avx512f"))) float fma_avx512(long iters, float seed) {
  __m512 acc[kAvx512Chains];
  for (int i = 0; i < kAvx512Chains; ++i) acc[i] = _mm512_set1_ps(seed + static_cast<float>(i));
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kAvx512Chains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+v"(a));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kAvx512Chains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  float r = 0;
  for (float v : lanes) r += v;
  return r;
}

// Wall seconds for `threads` threads each running f once.
template <typename F>
double run_threads(int threads, F f) {
  double t0 = now_s();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { g_sink = f(kIters, static_cast<float>(t)); });
  for (auto& t : ts) t.join();
  return now_s() - t0;
}

// A dependent chain of 1-cycle integer adds runs at about one add per cycle.
double clock_ghz() {
  const long n = 200'000'000;
  long x = 0;
  double t0 = now_s();
  for (long i = 0; i < n; ++i) asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  double t = now_s() - t0;
  g_sink = static_cast<float>(x);
  return 4.0 * n / t / 1e9;
}

std::string figure(const char* name, const Stat& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, ", \"%s\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f, \"n\": %d}", name,
                s.med, s.mn, s.mx, kRuns);
  return buf;
}

// GFLOP/s over kRuns runs: 2 flops per lane per FMA.
template <typename F>
Stat gflops(F f, int lanes, int chains, int threads) {
  std::vector<double> v;
  double flop = 2.0 * lanes * chains * static_cast<double>(kIters) * threads / 1e9;
  for (int r = 0; r < kRuns; ++r) v.push_back(flop / run_threads(threads, f));
  return stat(v);
}

}  // namespace

int main() {
  std::vector<double> clk;
  for (int r = 0; r < kRuns; ++r) clk.push_back(clock_ghz());
  Stat c = stat(clk);
  std::string out = "{\"workload\": \"w5_peak_ember\", \"figures\": {";
  char buf[160];
  std::snprintf(buf, sizeof buf, "\"est_clock_ghz\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f, \"n\": %d}",
                c.med, c.mn, c.mx, kRuns);
  out += buf;
  bool avx512 = __builtin_cpu_supports("avx512f");
  Stat peak[3]{};  // by thread count
  for (int th : {1, 2}) {
    Stat s = gflops(fma_avx2, 8, kAvx2Chains, th);
    out += figure(("avx2_" + std::to_string(th) + "thr_gflops").c_str(), s);
    peak[th] = s;
    if (avx512) {
      s = gflops(fma_avx512, 16, kAvx512Chains, th);
      out += figure(("avx512_" + std::to_string(th) + "thr_gflops").c_str(), s);
      peak[th] = s;
    }
  }
  // The machine's peak: the widest FMA it has.
  out += figure("peak_1thr_gflops", peak[1]);
  out += figure("peak_2thr_gflops", peak[2]);
  std::printf("%s}, \"isa\": \"%s\"}\n", out.c_str(), avx512 ? "avx512" : "avx2");
  return 0;
}

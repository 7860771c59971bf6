// W10 probe: the Ember twin of ../shared/anchors/w3_op_overhead.cpp, built by
// scripts/bench-vs-pytorch against the *installed* headers and library
// (`cmake --install`), to measure what a user pays for a small program:
// compile+link time, the shared libraries it loads (ldd), and process start
// time (`w10_probe noop` returns from main at once, as the anchor's `noop`).
// Not part of the CMake build (the bench/ glob only picks up bench_*.cpp).
//   g++ -O2 -std=c++20 -fopenmp -IPREFIX/include w10_probe.cpp -LPREFIX/lib -lember -lfmt
// Run: w10_probe [threads]   (same chain as W3: 10,000 `y = y + x`, backward)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ember/ember.h"

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "noop")) return 0;
  using namespace ember;
  set_num_threads(argc > 1 ? std::atoi(argv[1]) : 2);
  const int n = 10000;
  Tensor x = ones({1}).requires_grad_();
  Tensor y = zeros({1}).requires_grad_();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) y = y + x;
  y.backward();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (y.item<float>() != static_cast<float>(n)) {
    std::fprintf(stderr, "bad result\n");
    return 1;
  }
  std::printf("{\"workload\": \"w10_probe\", \"fwd_bwd_us_per_op\": %.4f}\n", us / n);
  return 0;
}

// Per-op overhead: a chain of N `z = z + x` on 1-element float tensors (no
// autograd), the same work as the no-grad part of
// ../shared/anchors/w3_op_overhead.cpp (LibTorch). Prints one JSON line with
// the median / min / max over 7 chains of µs per op.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ember/ember.h"

int main(int argc, char** argv) {
  using namespace ember;
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  set_num_threads(threads);
  const int n = 10000, reps = 7;
  Tensor x = ones({1});
  std::vector<double> us;
  for (int r = 0; r < reps + 1; ++r) {  // run 0 warms up the allocator cache
    Tensor z = zeros({1});
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) z = z + x;
    auto t1 = std::chrono::steady_clock::now();
    if (z.item<float>() != static_cast<float>(n)) {
      std::fprintf(stderr, "bad result\n");
      return 1;
    }
    if (r > 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(us.begin(), us.end());
  std::printf("{\"workload\": \"op_overhead_add_1elem\", \"threads\": %d, \"us_per_op\": {\"median\": %.4f, "
              "\"min\": %.4f, \"max\": %.4f, \"n\": %d}}\n",
              threads, us[us.size() / 2], us.front(), us.back(), reps);
  return 0;
}

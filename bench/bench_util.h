// What the benchmark programs share: a clock, the median/min/max of a set of
// timings, and the thread count of the Google Benchmark programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "ember/core/parallel.h"

namespace ember::bench {

inline double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stat {
  double med, mn, mx;
  size_t n;
};
inline Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back(), v.size()};
}

// 2 threads (the workloads' setting) unless OMP_NUM_THREADS says otherwise;
// set once per process.
inline void default_threads() {
  static bool done = [] {
    if (!std::getenv("OMP_NUM_THREADS")) set_num_threads(2);
    return true;
  }();
  (void)done;
}

}  // namespace ember::bench

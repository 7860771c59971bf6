// W9, eager rows: the W1 model (zoo `cnn`, random weights, eval mode) for
// inference under InferenceModeGuard. Batch-1 latency: median over 1000
// calls after 20 warm-up calls (µs). Batch-256 throughput: 20 calls after 2
// warm-up calls (images/s). The same work as the "eager" variant of
// ../shared/anchors/w9_inference.py; traced, frozen and int8 variants need
// the inference runtime, which Ember does not have yet.
//
//   bench_inference [threads]   prints one JSON line:
//   {"workload": "w9_inference_ember", "figures": {"eager": {"b1_latency_us": {...}, ...}}}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"
#include "ember/ember.h"
#include "ember/train/models.h"

using namespace ember;

namespace {

// Seconds per call of f, `calls` times.
using bench::seconds;
using bench::stat;
using bench::Stat;

template <typename F>
std::vector<double> time_calls(F f, int calls) {
  std::vector<double> ts;
  for (int i = 0; i < calls; ++i) {
    double t0 = seconds();
    f();
    ts.push_back(seconds() - t0);
  }
  return ts;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int calls = argc > 2 ? std::atoi(argv[2]) : 1000;
  set_num_threads(threads);
  manual_seed(0);
  train::CNN model{train::CNNOptions{}};
  model.eval();
  Tensor x1 = randn({1, 1, 28, 28}), x256 = randn({256, 1, 28, 28});
  InferenceModeGuard inference;
  Tensor sink;
  for (int i = 0; i < 20; ++i) sink = model.forward(x1);
  Stat b1 = stat(time_calls([&] { sink = model.forward(x1); }, calls));
  for (int i = 0; i < 2; ++i) sink = model.forward(x256);
  std::vector<double> t256 = time_calls([&] { sink = model.forward(x256); }, 20);
  for (double& t : t256) t = 256.0 / t;  // images/s per call
  Stat b256 = stat(t256);
  if (sink.size(0) != 256 || sink.size(1) != 10) {
    std::fprintf(stderr, "unexpected output shape\n");
    return 1;
  }
  std::printf(
      "{\"workload\": \"w9_inference_ember\", \"threads\": %d, \"figures\": {\"eager\": {"
      "\"b1_latency_us\": {\"median\": %.2f, \"min\": %.2f, \"max\": %.2f, \"n\": %zu}, "
      "\"b256_images_per_s\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f, \"n\": %zu}}}}\n",
      threads, b1.med * 1e6, b1.mn * 1e6, b1.mx * 1e6, b1.n, b256.med, b256.mn, b256.mx, b256.n);
  return 0;
}

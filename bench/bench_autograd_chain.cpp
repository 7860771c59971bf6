// W3: a chain of N = 10,000 `y = y + x` on 1-element float tensors with
// autograd, then backward; and the same chain under NoGradGuard. The same
// work as ../shared/anchors/w3_op_overhead.cpp (LibTorch) and
// w3_op_overhead.py. Prints one JSON line: median/min/max µs per op over 7
// chains (after one warm-up), like the anchors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"
#include "ember/autograd/autograd.h"
#include "ember/ember.h"

namespace {
double now_us() { return ember::bench::seconds() * 1e6; }
using ember::bench::stat;
using ember::bench::Stat;
}  // namespace

int main(int argc, char** argv) {
  using namespace ember;
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  set_num_threads(threads);
  const int n = 10000, reps = 7;
  Tensor x = ones({1}).requires_grad_();
  std::vector<double> fwd, bwd, nograd;
  for (int r = 0; r < reps + 1; ++r) {
    Tensor y = zeros({1}).requires_grad_();
    double t0 = now_us();
    for (int i = 0; i < n; ++i) y = y + x;
    double t1 = now_us();
    y.backward();
    double t2 = now_us();
    if (y.item<float>() != static_cast<float>(n) || x.grad().item<float>() != static_cast<float>(n)) {
      std::fprintf(stderr, "bad result\n");
      return 1;
    }
    x.set_grad(Tensor());
    double t3, t4;
    {
      NoGradGuard no_grad;
      Tensor z = zeros({1});
      t3 = now_us();
      for (int i = 0; i < n; ++i) z = z + x;
      t4 = now_us();
    }
    if (r == 0) continue;
    fwd.push_back((t1 - t0) / n);
    bwd.push_back((t2 - t1) / n);
    nograd.push_back((t4 - t3) / n);
  }
  Stat f = stat(fwd), b = stat(bwd), g = stat(nograd);
  std::printf(
      "{\"workload\": \"w3_op_overhead_ember\", \"threads\": %d, \"figures\": {\"n_ops\": %d, "
      "\"fwd_us_per_op\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"n\": %d}, "
      "\"bwd_us_per_op\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"n\": %d}, "
      "\"nograd_fwd_us_per_op\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"n\": %d}}}\n",
      threads, n, f.med, f.mn, f.mx, reps, b.med, b.mn, b.mx, reps, g.med, g.mn, g.mx, reps);
  return 0;
}

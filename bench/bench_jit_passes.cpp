// jit passes on the W1 model (zoo `cnn`, default options, random weights,
// eval mode): the interpreter's batch-256 time per optimisation level, and
// eager for reference. Levels are timed round-robin (one call of each per
// round) so machine noise hits them alike; `rounds` rounds after 2 warm-up
// rounds. Prints one line per variant: median / min ms and images/s.
//
//   bench_jit_passes [threads=2] [batch=256] [rounds=10]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"

using namespace ember;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 256;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 10;
  set_num_threads(threads);
  manual_seed(0);
  train::CNN model(train::CNNOptions{});
  model.eval();
  Tensor x = randn({batch, 1, 28, 28});
  jit::Graph g = jit::trace(model, {x});
  std::vector<jit::Graph> levels;
  for (int l = 0; l <= jit::kMaxOptimizeLevel; ++l) levels.push_back(jit::optimize(g, l).graph);
  std::vector<std::vector<double>> ts(levels.size() + 1);
  for (int r = 0; r < rounds + 2; ++r) {
    for (size_t l = 0; l <= levels.size(); ++l) {
      const double t0 = bench::seconds();
      if (l == levels.size()) {
        InferenceModeGuard guard;
        Tensor y = model.forward(x);
      } else {
        std::vector<Tensor> y = jit::run(levels[l], {x});
      }
      if (r >= 2) ts[l].push_back(bench::seconds() - t0);
    }
  }
  for (size_t l = 0; l <= levels.size(); ++l) {
    bench::Stat s = bench::stat(ts[l]);
    const std::string name = l == levels.size() ? "eager" : "optimize " + std::to_string(l);
    const size_t nodes = l == levels.size() ? 0 : levels[l].nodes.size();
    std::printf("%-11s nodes %3zu  batch %lld threads %d: median %.2f ms, min %.2f ms, %.0f images/s (median)\n",
                name.c_str(), nodes, static_cast<long long>(batch), threads, s.med * 1e3, s.mn * 1e3,
                static_cast<double>(batch) / s.med);
  }
  return 0;
}

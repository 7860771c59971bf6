// W8 inference (issue 14): the W8 TransformerEncoder (4 layers, d_model 256,
// 4 heads, ff 1024, batch_first) in eval mode on a [16, 128, 256] input:
// eager under InferenceModeGuard, and runtime::Session on the graph traced
// with dynamic batch and sequence dims and optimised at level 2. Median ms
// per forward over `reps` calls after 3 warm-up calls, and the largest
// difference from eager. Twin: bench/torch/transformer_infer.py (eager
// no_grad, eval: PyTorch's fused encoder fast path).
//
//   bench_transformer_infer [threads] [reps]   prints one JSON line
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "ember/ember.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/nn/transformer.h"
#include "ember/runtime/session.h"

using namespace ember;

namespace {

bench::Stat time_ms(const std::function<void()>& f, int reps) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> ts;
  for (int i = 0; i < reps; ++i) {
    const double t0 = bench::seconds();
    f();
    ts.push_back((bench::seconds() - t0) * 1e3);
  }
  return bench::stat(ts);
}

std::string json(const char* name, const bench::Stat& s, double diff) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\"%s\": {\"ms\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f, \"n\": %zu}, "
                "\"max_abs_diff_vs_eager\": %.3g}",
                name, s.med, s.mn, s.mx, s.n, diff);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  set_num_threads(threads);
  manual_seed(0);
  nn::TransformerEncoderLayer layer(256, 4, 1024, 0.1, "relu", 1e-5, /*batch_first=*/true);
  nn::TransformerEncoder model(layer, 4);
  model.eval();
  Tensor x = randn({16, 128, 256});
  Tensor ref, out;
  bench::Stat eager;
  {
    InferenceModeGuard inference;
    ref = model.forward(x);
    eager = time_ms([&] { out = model.forward(x); }, reps);
  }
  jit::TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}, {0, 1, "seq"}};
  jit::ModelFile file;
  file.graph = jit::optimize(jit::trace(model, {randn({4, 32, 256})}, opts), 2).graph;
  runtime::Session session(std::move(file));
  const bench::Stat runtime =
      time_ms([&] { out = session.run(std::vector<Tensor>{x})[0]; }, reps);
  const double diff = (out - ref).abs().max().item<double>();
  std::printf("{\"workload\": \"w8_inference_ember\", \"threads\": %d, \"figures\": {%s, %s}}\n", threads,
              json("eager", eager, 0).c_str(), json("runtime_o2", runtime, diff).c_str());
  return 0;
}

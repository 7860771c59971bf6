// W9: the W1 model (zoo `cnn`, random weights, eval mode) for inference.
// Variants, each measured the same way as ../shared/anchors/w9_inference.py:
// batch-1 latency as the median over `calls` calls after 20 warm-up calls
// (µs); batch-256 throughput over 20 calls after 2 warm-up calls (images/s).
//   eager       model.forward under InferenceModeGuard
//   runtime_oN  jit::trace (dynamic batch) + jit::optimize level N, run by a
//               runtime::Session (memory plan, pooled prepared graphs);
//               runtime_o2 is the counterpart of torch's traced + frozen +
//               optimize_for_inference variant (BatchNorm folded, ReLU fused)
//   runtime_o2_nchw  level 2 without jit::propagate_layouts (every conv
//               output reordered to NCHW): the layout pass's effect
//   runtime_o2_int8_dynamic  level 2 + jit::quantize_dynamic (the Linears;
//               torch's quantize_dynamic counterpart)
//   runtime_o2_int8_static   level 2 + static int8 (jit::quantize_static:
//               both convs and both Linears, calibrated on random batches)
// Also per variant at batch 256: the peak of Ember's allocator during the
// first call (for the runtime that includes building the arena and the
// kernels' scratch) and during a steady-state call, net of what was
// allocated before it (MiB), and cpu_alloc calls per steady-state call on
// the calling thread.
//
//   bench_inference [threads] [calls] [b1 [variant]]   prints one JSON line:
//   {"workload": "w9_inference_ember", "figures": {"eager": {"b1_latency_us": {...}, ...}, "runtime_o2": ...}}
// With "cpu" each variant reports process CPU time per call at batch 1
// and 256 (at 1 thread a load-independent measure of the work). With "b1"
// only the batch-1 calls run (after 20 warm-up calls), for
// counting instructions per call under valgrind --tool=callgrind
// --toggle-collect='*Session::run*' (or '*CNN::forward*' for eager).
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "ember/core/allocator.h"
#include "ember/ember.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/jit/passes/quantize_dynamic.h"
#include "ember/jit/passes/quantize_static.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"

using namespace ember;

namespace {

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

std::string stat_json(const Stat& s, double scale, const char* fmt_num) {
  char buf[256];
  std::string f = std::string("{\"median\": ") + fmt_num + ", \"min\": " + fmt_num + ", \"max\": " + fmt_num +
                  ", \"n\": %zu}";
  std::snprintf(buf, sizeof buf, f.c_str(), s.med * scale, s.mn * scale, s.mx * scale, s.n);
  return buf;
}

// Times `forward` at batch 1 and 256; returns the variant's JSON object.
std::string measure(const std::function<Tensor(const Tensor&)>& forward, int calls, const Tensor& x1,
                    const Tensor& x256, const Tensor& ref256) {
  Tensor sink;
  // The first batch-256 call's peak: everything the variant needs at that
  // size (for the runtime: building its arena and scratch too).
  cpu_reset_peak_allocated_bytes();
  const size_t cold_base = cpu_allocator_stats().allocated_bytes;
  sink = forward(x256);
  const double cold_peak_mib = static_cast<double>(cpu_allocator_stats().peak_allocated_bytes - cold_base) / (1 << 20);
  sink = Tensor();
  for (int i = 0; i < 20; ++i) sink = forward(x1);
  Stat b1 = stat(time_calls([&] { sink = forward(x1); }, calls));
  for (int i = 0; i < 2; ++i) sink = forward(x256);
  // Peak and allocation calls of one steady-state batch-256 call.
  sink = Tensor();
  const size_t before = cpu_allocator_stats().allocated_bytes;
  cpu_reset_peak_allocated_bytes();
  const uint64_t calls_before = cpu_alloc_calls_on_this_thread();
  sink = forward(x256);
  const uint64_t alloc_calls = cpu_alloc_calls_on_this_thread() - calls_before;
  const double peak_mib = static_cast<double>(cpu_allocator_stats().peak_allocated_bytes - before) / (1 << 20);
  const double max_diff = (sink - ref256).abs().max().item<double>();
  std::vector<double> t256 = time_calls([&] { sink = forward(x256); }, 20);
  for (double& t : t256) t = 256.0 / t;  // images/s per call
  Stat b256 = stat(t256);
  if (sink.size(0) != 256 || sink.size(1) != 10) {
    std::fprintf(stderr, "unexpected output shape\n");
    std::exit(1);
  }
  char tail[256];
  std::snprintf(tail, sizeof tail,
                ", \"b256_first_call_peak_mib\": %.2f, \"b256_peak_mib\": %.2f, \"b256_alloc_calls\": %llu, "
                "\"max_abs_diff_vs_eager_b256\": %.3g}",
                cold_peak_mib, peak_mib, static_cast<unsigned long long>(alloc_calls), max_diff);
  return "{\"b1_latency_us\": " + stat_json(b1, 1e6, "%.2f") + ", \"b256_images_per_s\": " +
         stat_json(b256, 1.0, "%.1f") + tail;
}

// g without jit::propagate_layouts' marks: every conv output NCHW.
jit::Graph without_layouts(jit::Graph g) {
  for (jit::Node& n : g.nodes) std::erase_if(n.attrs, [](const jit::Attr& a) { return a.name == "output_layout"; });
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int calls = argc > 2 ? std::atoi(argv[2]) : 1000;
  const bool cpu_mode = argc > 3 && std::string(argv[3]) == "cpu";
  const bool b1_only = cpu_mode || (argc > 3 && std::string(argv[3]) == "b1");
  set_num_threads(threads);
  manual_seed(0);
  train::CNN model{train::CNNOptions{}};
  model.eval();
  Tensor x1 = randn({1, 1, 28, 28}), x256 = randn({256, 1, 28, 28});
  if (b1_only) {
    const std::string only = argc > 4 ? argv[4] : "";  // one variant ("runtime_o2"), for callgrind
    auto b1 = [&](const char* name, const std::function<Tensor(const Tensor&)>& forward) {
      if (!only.empty() && only != name) return;
      Tensor sink;
      for (int i = 0; i < 20; ++i) sink = forward(x1);
      if (cpu_mode) {
        // Process CPU time per call (all threads): at 1 thread, the work
        // itself, whatever else the machine runs.
        auto cpu = [&](const Tensor& x, int n) {
          sink = forward(x);
          const std::clock_t c0 = std::clock();
          for (int i = 0; i < n; ++i) sink = forward(x);
          return static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / n;
        };
        const double t1 = cpu(x1, calls), t256 = cpu(x256, std::max(calls / 50, 2));
        std::printf("%s cpu_us_per_call b1 %.2f b256 %.0f (%.0f img/s of CPU time)\n", name, t1 * 1e6, t256 * 1e6,
                    256.0 / t256);
        return;
      }
      Stat s = stat(time_calls([&] { sink = forward(x1); }, calls));
      std::printf("%s b1_latency_us median %.2f\n", name, s.med * 1e6);
    };
    {
      InferenceModeGuard inference;
      b1("eager", [&](const Tensor& x) { return model.forward(x); });
    }
    jit::TraceOptions opts;
    opts.dynamic_dims = {{0, 0, "batch"}};
    const jit::Graph traced = jit::trace(model, {randn({4, 1, 28, 28})}, opts);
    for (int level = 0; level <= jit::kMaxOptimizeLevel; ++level) {
      jit::ModelFile file;
      file.graph = jit::optimize(traced, level).graph;
      runtime::Session session(std::move(file));
      b1(("runtime_o" + std::to_string(level)).c_str(),
         [&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; });
    }
    {
      jit::ModelFile file;
      file.graph = without_layouts(jit::optimize(traced, 2).graph);
      runtime::Session session(std::move(file));
      b1("runtime_o2_nchw", [&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; });
    }
    // Level 2 without jit::select_kernels: the fused graph on the generic kernels.
    jit::ModelFile generic;
    generic.graph = jit::optimize(traced, 2).graph;
    for (jit::Node& n : generic.graph.nodes)
      std::erase_if(n.attrs, [](const jit::Attr& a) { return a.name == "kernel"; });
    runtime::Session session(std::move(generic));
    b1("runtime_o2_generic", [&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; });
    return 0;
  }
  Tensor ref256;
  {
    InferenceModeGuard inference;
    ref256 = model.forward(x256);
  }
  std::string json = "{\"workload\": \"w9_inference_ember\", \"threads\": " + std::to_string(threads) +
                     ", \"figures\": {";
  {
    InferenceModeGuard inference;
    json += "\"eager\": " + measure([&](const Tensor& x) { return model.forward(x); }, calls, x1, x256, ref256);
  }
  jit::TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  const jit::Graph traced = jit::trace(model, {randn({4, 1, 28, 28})}, opts);
  for (int level = 0; level <= jit::kMaxOptimizeLevel; ++level) {
    jit::ModelFile file;
    file.graph = jit::optimize(traced, level).graph;
    runtime::Session session(std::move(file));
    json += ", \"runtime_o" + std::to_string(level) + "\": " +
            measure([&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; }, calls, x1, x256,
                    ref256);
  }
  {
    // Level 2 without jit::propagate_layouts (every conv output NCHW): the pass's effect.
    jit::ModelFile file;
    file.graph = without_layouts(jit::optimize(traced, 2).graph);
    runtime::Session session(std::move(file));
    json += ", \"runtime_o2_nchw\": " +
            measure([&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; }, calls, x1, x256,
                    ref256);
  }
  // int8 (issue 15): dynamic (the Linears; torch's quantize_dynamic
  // counterpart) and static (every conv and Linear, calibrated on 8 random
  // batches, as the weights are random too) on the level-2 graph.
  const jit::Graph o2 = jit::optimize(traced, 2).graph;
  // A graph's figures through a runtime::Session.
  auto measure_graph = [&](jit::Graph g) {
    jit::ModelFile file;
    file.graph = std::move(g);
    runtime::Session session(std::move(file));
    return measure([&](const Tensor& x) { return session.run(std::vector<Tensor>{x})[0]; }, calls, x1, x256, ref256);
  };
  json += ", \"runtime_o2_int8_dynamic\": " + measure_graph(jit::quantize_dynamic(o2).graph);
  jit::StaticCalibration calibration = quant::prepare(o2);
  for (int i = 0; i < 8; ++i) calibration.observe({randn({64, 1, 28, 28})});
  json += ", \"runtime_o2_int8_static\": " + measure_graph(quant::convert(calibration).graph);
  json += "}}";
  std::printf("%s\n", json.c_str());
  return 0;
}

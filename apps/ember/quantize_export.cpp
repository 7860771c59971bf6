// ember export RUN --quantize dynamic|static [--max-accuracy-drop 1.0]: the
// float graph through jit::quantize_dynamic, or calibrated on training
// batches and converted by jit::quantize_static; both graphs evaluated on the
// test split with runtime::Session (the deployment path), file sizes and
// speedup reported.
#include "quantize_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/quantize_dynamic.h"
#include "ember/jit/passes/quantize_static.h"
#include "ember/quant/qlinear.h"
#include "ember/runtime/session.h"
#include "ember/train/config.h"

namespace ember::cli {

namespace fs = std::filesystem;

namespace {

struct Eval {
  int64_t correct = 0, samples = 0;
  double seconds = 0;
  double accuracy() const { return samples ? 100.0 * static_cast<double>(correct) / static_cast<double>(samples) : 0; }
};

std::vector<Tensor> inputs_of(const data::Sample& s) {
  if (s.is_tensor()) return {s.tensor()};
  std::vector<Tensor> out;
  for (const data::Sample& item : s.items()) out.push_back(item.tensor());
  return out;
}


// Top-1 accuracy and run time of both sessions over the batches that fit the
// graph's signature (all of them with --dynamic batch).
std::pair<Eval, Eval> evaluate(const runtime::Session& f, const runtime::Session& q, const train::Config& c,
                               const train::DataBundle& data) {
  Eval ef, eq;
  auto loader = train::make_loader(c, data.test, false);
  bool warm = false;
  for (data::Sample& batch : *loader) {
    std::vector<Tensor> in = inputs_of(batch[0]);
    if (!jit::accepts_inputs(f.model().graph, in)) continue;
    const Tensor& target = batch[1].tensor();
    EMBER_CHECK(target.dtype() == kInt64 && target.dim() == 1,
                "export --quantize: accuracy needs class labels (int64 [batch]), the run's targets are {}[{}]",
                to_string(target.dtype()), target.dim());
    if (!warm) {  // primitive creation is not inference time
      (void)f.run(in);
      (void)q.run(in);
      warm = true;
    }
    for (auto [s, e] : {std::pair{&f, &ef}, std::pair{&q, &eq}}) {
      const auto t0 = std::chrono::steady_clock::now();
      Tensor out = s->run(in)[0];
      e->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EMBER_CHECK(out.dim() == 2 && out.size(0) == target.size(0),
                  "export --quantize: accuracy needs [batch, classes] outputs, got [{}]", fmt::join(out.sizes(), ", "));
      e->correct += out.argmax(1).eq(target).sum().item<int64_t>();
      e->samples += target.size(0);
    }
  }
  EMBER_CHECK(ef.samples > 0, "export --quantize: no test batch fits the graph (export with --dynamic batch)");
  return {ef, eq};
}

std::string mib(uintmax_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// The graph calibrated on up to q.calibration_batches training batches (in
// order, evaluation transforms) and converted.
jit::StaticQuantizeResult quantize_static(const jit::Graph& g, const train::Config& c, const train::DataBundle& data,
                                          const QuantizeOptions& q) {
  jit::StaticQuantConfig config;
  config.observer.kind = quant::observer_from_name(q.observer);
  config.keep_float = q.keep_float;
  jit::StaticCalibration calibration = quant::prepare(g, config);
  auto loader = train::make_loader(c, data.train, false);
  for (data::Sample& batch : *loader) {
    if (calibration.batches() >= q.calibration_batches) break;
    std::vector<Tensor> in = inputs_of(batch[0]);
    if (jit::accepts_inputs(g, in)) calibration.observe(in);
  }
  EMBER_CHECK(calibration.batches() > 0,
              "export --quantize static: no training batch fits the graph (export with --dynamic batch)");
  std::printf("calibrated on %lld training batches (observer %s)\n", static_cast<long long>(calibration.batches()),
              q.observer.c_str());
  return quant::convert(calibration);
}

}  // namespace

int export_quantized(jit::ModelFile float_model, const train::Config& c, const train::DataBundle& data,
                     const QuantizeOptions& q, const std::string& output) {
  if (q.mode != "dynamic" && q.mode != "static")
    throw train::ConfigError(fmt::format("export: --quantize takes dynamic or static, got '{}'", q.mode));
  jit::ModelFile qm = float_model;
  std::vector<std::string> quantized;
  std::vector<std::pair<std::string, std::string>> kept_float;
  std::string summary;
  if (q.mode == "dynamic") {
    const bool reduce_range = quant::default_reduce_range();
    jit::DynamicQuantizeResult r = jit::quantize_dynamic(float_model.graph, reduce_range);
    qm.graph = r.graph;
    qm.source["quantize"] = fmt::format("dynamic int8 (weights per channel, activations per call{})",
                                        reduce_range ? ", 7-bit" : "");
    quantized = r.quantized, kept_float = r.kept_float, summary = r.str();
  } else {
    // The int8 layers take their ReLU and max pool fused (level 2), so that
    // uint8 passes between them; the float model is compared as exported.
    jit::StaticQuantizeResult r = quantize_static(jit::optimize(float_model.graph, 2).graph, c, data, q);
    qm.graph = r.graph;
    qm.source["quantize"] = fmt::format("static int8 (weights per channel, activations per tensor, observer {}, "
                                        "{} calibration batches at most)", q.observer, q.calibration_batches);
    quantized = r.quantized, kept_float = r.kept_float, summary = r.str();
  }
  jit::save_model(qm, output);
  const std::string float_path = output + ".float.tmp";
  jit::save_model(float_model, float_path);
  const uintmax_t float_bytes = fs::file_size(float_path), int8_bytes = fs::file_size(output);
  fs::remove(float_path);

  std::istringstream lines(summary);
  for (std::string line; std::getline(lines, line);) std::printf("quantize %s\n", line.c_str());
  runtime::Session fs_session(float_model), qs_session(jit::load_model(output));
  const auto [ef, eq] = evaluate(fs_session, qs_session, c, data);
  const double drop = ef.accuracy() - eq.accuracy();
  std::printf("accuracy (test, %lld samples): float %.2f%%, int8 %.2f%%, drop %.2f points (limit %.2f)\n",
              static_cast<long long>(ef.samples), ef.accuracy(), eq.accuracy(), drop, q.max_accuracy_drop);
  std::printf("file size: float %s, int8 %s (%.2fx)\n", mib(float_bytes).c_str(), mib(int8_bytes).c_str(),
              static_cast<double>(int8_bytes) / static_cast<double>(float_bytes));
  std::printf("time over the test split (runtime, %d threads): float %.3f s, int8 %.3f s, speedup %.2fx\n",
              get_num_threads(), ef.seconds, eq.seconds, eq.seconds > 0 ? ef.seconds / eq.seconds : 0.0);
  const bool ok = drop <= q.max_accuracy_drop;
  std::printf("%s %s: %zu nodes, %zu int8 layers, %zu kept in float%s\n", ok ? "wrote" : "wrote (accuracy FAILED)",
              output.c_str(), qm.graph.nodes.size(), quantized.size(), kept_float.size(),
              ok ? "" : fmt::format("; the int8 model loses {:.2f} points, more than --max-accuracy-drop {:.2f}",
                                    drop, q.max_accuracy_drop)
                            .c_str());
  return ok ? 0 : 1;
}

}  // namespace ember::cli

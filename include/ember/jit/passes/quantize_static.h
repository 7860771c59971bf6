// Static post-training int8 quantization of a traced graph (PyTorch's
// prepare -> calibrate -> convert, on the graph): observers watch the
// activations around every conv2d and linear product with constant weights
// while the user runs calibration batches, then convert writes int8 nodes:
// weights int8 per output channel (symmetric), activations per tensor with
// the calibrated scales, bias and ReLU (and a fused max pool) in the
// epilogue, uint8 between consecutive int8 layers and float only at the
// edges (Note [static int8] in src/jit/passes/quantize_static.cpp). What
// stays float is listed with the reason.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/jit/graph.h"
#include "ember/quant/observer.h"

namespace ember::nn {
class Module;
}  // namespace ember::nn

namespace ember::jit {

struct StaticQuantizeResult {
  Graph graph;
  std::vector<std::string> quantized;                         // "scope (weight name)"
  std::vector<std::pair<std::string, std::string>> kept_float;  // where, reason
  std::string str() const;
};

struct StaticQuantConfig {
  quant::ObserverConfig observer;
  // Scopes (module paths) whose layers stay float, e.g. a sensitive first conv.
  std::vector<std::string> keep_float;
};

// The graph being calibrated: quant::prepare's result.
class StaticCalibration {
 public:
  // Best on an optimized graph (jit::optimize level 2: batch norm folded,
  // ReLU and pooling fused into the convs they follow).
  explicit StaticCalibration(const Graph& g, StaticQuantConfig config = {});
  StaticCalibration(StaticCalibration&&) noexcept;
  StaticCalibration& operator=(StaticCalibration&&) noexcept;
  ~StaticCalibration();
  // Runs the graph on one batch and records what every observed activation held.
  void observe(const std::vector<Tensor>& inputs);
  int64_t batches() const;
  // The int8 graph; throws if no batch was observed.
  StaticQuantizeResult convert() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ember::jit

namespace ember::quant {

// torch.ao.quantization's names for the same steps.
inline jit::StaticCalibration prepare(const jit::Graph& g, jit::StaticQuantConfig config = {}) {
  return jit::StaticCalibration(g, std::move(config));
}
// A module (eval mode) traced on example inputs, dim 0 of each a dynamic
// "batch", optimized at level 2, then prepared as above.
jit::StaticCalibration prepare(nn::Module& module, const std::vector<Tensor>& example_inputs,
                               jit::StaticQuantConfig config = {});
inline jit::StaticQuantizeResult convert(const jit::StaticCalibration& calibrated) { return calibrated.convert(); }

}  // namespace ember::quant

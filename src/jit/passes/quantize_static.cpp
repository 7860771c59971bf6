// Note [static int8]
// Static post-training quantization, on the graph. prepare (the
// StaticCalibration constructor) finds the products it can quantize: conv2d
// nodes and matmuls (nn::Linear) whose weights are constants, with at most a
// fused ReLU (and, for a conv, a fused max pool) after them. It returns the
// graph with the input and output activation of each such node added as
// extra graph outputs; observe() runs it and feeds those to one observer
// per activation. convert() then rewrites each product:
//   - weights: int8 per output channel, symmetric (scale = max|w_c| / 127);
//   - activations: per tensor with zero point 0: uint8 (scale = bound / 255)
//     where calibration saw no negative value (everything after a ReLU),
//     int8 symmetric (bound / 127) otherwise. Zero points of 0 keep the
//     int8 kernels free of the zero-point correction terms, at the cost of
//     one bit for signed activations (PyTorch's default is asymmetric
//     uint8);
//   - conv2d_int8 / linear_int8 compute the int32 product, then bias and
//     ReLU in float, and write either float32 or, when every reader is
//     another int8 product (directly or through views such as a flatten),
//     uint8 with the output's calibrated scale, so that consecutive int8
//     layers pass uint8 and nothing is dequantized between them;
//   - a float activation entering an int8 product goes through one
//     quantize_static node (shared by all its int8 readers).
// So float appears only at the edges: the model's input, the outputs, and
// around whatever stays float (listed with the reason).
#include "ember/jit/passes/quantize_static.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "ember/core/error.h"
#include "ember/jit/interpreter.h"
#include "ember/ops/factory.h"
#include "ember/jit/passes/dead_code.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/quant/quantize_dynamic.h"
#include "ember/jit/passes/propagate_layouts.h"
#include "rewrite.h"

namespace ember::jit {

std::string StaticQuantizeResult::str() const { return quant::report_str("quantized to int8", quantized, kept_float); }

namespace {

using passes_detail::constant_index;
using passes_detail::find_weight;
using passes_detail::producers;
using passes_detail::string_attr;
using passes_detail::WeightRef;

struct Candidate {
  size_t node = 0;
  bool conv = false;
  WeightRef weight;
  int bias = kNoValue;
  bool relu = false;
  std::string where;
};

// Why node n cannot become an int8 product; empty when it can (filling c).
std::string check_candidate(const Graph& g, const Node& n, const std::vector<int>& producer,
                            const std::vector<int>& cidx, Candidate& c) {
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue || n.inputs[0] == kNoValue ||
      n.inputs[1] == kNoValue)
    return "without the usual operands";
  if (g.type(n.outputs[0]).dtype != kFloat32 || g.type(n.inputs[0]).dtype != kFloat32) return "not float32";
  if (n.find("residual") || n.find("post_activation")) return "a fused residual add (no int8 form yet)";
  const std::string act = string_attr(n, "activation");
  if (!act.empty() && act != "relu") return fmt::format("a fused {} (int8 layers fuse relu only)", act);
  c.relu = act == "relu";
  if (n.kind == "conv2d") {
    c.conv = true;
    const std::string pool = string_attr(n, "pool");
    if (!pool.empty() && pool != "max") return fmt::format("a fused {} pool (int8 convs fuse max pooling only)", pool);
    if (g.type(n.inputs[0]).shape.size() != 4) return "not a 4-D convolution";
    const int ci = cidx[static_cast<size_t>(n.inputs[1])];
    if (ci < 0) return "its weight is not a constant";
    c.weight = {ci, false};
    c.bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  } else {
    if (g.type(n.outputs[0]).shape.size() != 2 || g.type(n.inputs[0]).shape.size() != 2) return "not a 2-D product";
    if (n.attr_scalar("alpha").to_double() != 1.0 || n.attr_scalar("beta").to_double() != 0.0)
      return "a scaled or accumulating product (alpha != 1 or beta != 0)";
    c.weight = find_weight(g, n.inputs[1], producer, cidx);
    if (c.weight.constant < 0) return "its second operand is not a constant weight (a product of two activations)";
    c.bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  }
  if (g.constants[static_cast<size_t>(c.weight.constant)].data.dtype() != kFloat32) return "its weight is not float32";
  if (c.bias != kNoValue && cidx[static_cast<size_t>(c.bias)] < 0) return "its bias is not a constant";
  return {};
}

// Symmetric int8 per output channel (dim 0): scale_c = max|w_c| / 127.
std::pair<Tensor, Tensor> quantize_weight(const Tensor& w_in) {
  const Tensor w = w_in.contiguous();
  const int64_t rows = w.size(0), per_row = rows ? w.numel() / rows : 0;
  Tensor q = empty(w.sizes(), TensorOptions(kInt8)), scale = empty({rows}, TensorOptions(kFloat32));
  const float* src = w.data_ptr<float>();
  int8_t* dst = q.data_ptr<int8_t>();
  float* sc = scale.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    float m = 0;
    for (int64_t i = 0; i < per_row; ++i) m = std::max(m, std::fabs(src[r * per_row + i]));
    sc[r] = m > 0 && std::isfinite(m) ? m / 127.f : 1.f;
    for (int64_t i = 0; i < per_row; ++i) {
      const float q = std::nearbyint(src[r * per_row + i] / sc[r]);
      dst[r * per_row + i] = static_cast<int8_t>(std::isnan(q) ? 0.f : std::clamp(q, -127.f, 127.f));  // NaN: 0
    }
  }
  return {q, scale};
}

}  // namespace

struct StaticCalibration::State {
  Graph g;           // the float graph
  Graph observing;   // g with the observed activations as extra outputs
  StaticQuantConfig config;
  std::vector<Candidate> cands;
  std::vector<std::pair<std::string, std::string>> kept_float;
  std::vector<int> observed;                 // value ids, in output order after g's outputs
  std::map<int, quant::Observer> observers;  // value id -> observer
  int64_t batches = 0;
};

StaticCalibration::StaticCalibration(StaticCalibration&&) noexcept = default;
StaticCalibration& StaticCalibration::operator=(StaticCalibration&&) noexcept = default;
StaticCalibration::~StaticCalibration() = default;
int64_t StaticCalibration::batches() const { return s_->batches; }

StaticCalibration::StaticCalibration(const Graph& g, StaticQuantConfig config) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.g = g;
  s.config = std::move(config);
  const std::vector<int> producer = producers(g);
  const std::vector<int> cidx = constant_index(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::string where = n.scope.empty() ? fmt::format("node {}", i) : n.scope;
    if (!n.subgraphs.empty()) {
      s.kept_float.emplace_back(where, fmt::format("a {} node (its sub-graphs stay float)", n.kind));
      continue;
    }
    if (n.kind == "rnn_layer" || n.kind == "linear_dynamic_int8") {
      s.kept_float.emplace_back(where, fmt::format("a {} node has no static int8 form", n.kind));
      continue;
    }
    if (n.kind != "conv2d" && n.kind != "matmul") continue;
    const bool keep = std::any_of(s.config.keep_float.begin(), s.config.keep_float.end(),
                                  [&](const std::string& k) { return !k.empty() && n.scope == k; });
    if (keep) {
      s.kept_float.emplace_back(where, "kept float as asked (keep_float)");
      continue;
    }
    Candidate c;
    c.node = i;
    c.where = where;
    const std::string why = check_candidate(g, n, producer, cidx, c);
    if (!why.empty()) {
      s.kept_float.emplace_back(where, fmt::format("{}: {}", n.kind, why));
      continue;
    }
    s.cands.push_back(c);
    for (int v : {n.inputs[0], n.outputs[0]})
      if (!s.observers.count(v)) {
        s.observers.emplace(v, quant::Observer(s.config.observer));
        s.observed.push_back(v);
      }
  }
  s.observing = g;
  for (size_t k = 0; k < s.observed.size(); ++k)
    s.observing.outputs.push_back({fmt::format("observe.{}", k), s.observed[k]});
}

void StaticCalibration::observe(const std::vector<Tensor>& inputs) {
  State& s = *s_;
  const std::vector<Tensor> out = run(s.observing, inputs);
  const size_t first = s.g.outputs.size();
  for (size_t k = 0; k < s.observed.size(); ++k) s.observers.at(s.observed[k]).observe(out.at(first + k));
  ++s.batches;
}

StaticQuantizeResult StaticCalibration::convert() const {
  const State& s = *s_;
  EMBER_CHECK(s.batches > 0, "quantize_static: convert needs at least one calibration batch (observe) first");
  StaticQuantizeResult r;
  r.kept_float = s.kept_float;
  Graph g = s.g;
  const std::vector<int> producer = producers(g);
  std::vector<int> cand_of(g.nodes.size(), -1);
  for (size_t k = 0; k < s.cands.size(); ++k) cand_of[s.cands[k].node] = static_cast<int>(k);
  // Readers per value: (node, input index); a graph output reads as node -1.
  std::vector<std::vector<std::pair<int, size_t>>> readers(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t j = 0; j < g.nodes[i].inputs.size(); ++j)
      if (g.nodes[i].inputs[j] != kNoValue) readers[static_cast<size_t>(g.nodes[i].inputs[j])].push_back({static_cast<int>(i), j});
  for (const NamedValue& o : g.outputs) readers[static_cast<size_t>(o.value)].push_back({-1, 0});
  auto is_view = [&](int node) {
    const Node& n = g.nodes[static_cast<size_t>(node)];
    return n.kind == "as_strided" && n.inputs.size() == 1 && n.outputs.size() == 1 && n.outputs[0] != kNoValue;
  };
  // Whether every reader of v is an int8 product's input 0, directly or through views.
  auto int8_readers_only = [&](auto&& self, int v) -> bool {
    const auto& rs = readers[static_cast<size_t>(v)];
    if (rs.empty()) return false;
    for (auto [node, j] : rs) {
      if (node < 0) return false;
      if (cand_of[static_cast<size_t>(node)] >= 0 && j == 0) continue;
      if (is_view(node) && self(self, g.nodes[static_cast<size_t>(node)].outputs[0])) continue;
      return false;
    }
    return true;
  };
  std::vector<char> emits_u8(s.cands.size(), 0);
  for (size_t k = 0; k < s.cands.size(); ++k)
    emits_u8[k] = s.cands[k].relu && int8_readers_only(int8_readers_only, g.nodes[s.cands[k].node].outputs[0]);
  // The candidate whose uint8 output v is (through views), or -1.
  auto u8_source = [&](int v) {
    for (int p = producer[static_cast<size_t>(v)]; p >= 0;) {
      const int k = cand_of[static_cast<size_t>(p)];
      if (k >= 0) return emits_u8[static_cast<size_t>(k)] ? k : -1;
      if (!is_view(p)) return -1;
      p = producer[static_cast<size_t>(g.nodes[static_cast<size_t>(p)].inputs[0])];
    }
    return -1;
  };
  auto out_scale = [&](int k) {
    return s.observers.at(g.nodes[s.cands[static_cast<size_t>(k)].node].outputs[0]).bound() / 255.f;
  };

  std::vector<Node> nodes;
  std::map<int, std::pair<int, float>> quantized_input;  // float value -> (its quantize_static output, scale)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node n = g.nodes[i];
    const int k = cand_of[i];
    if (k < 0) {
      // A view of a uint8 activation is a uint8 view.
      if (is_view(static_cast<int>(i)) && u8_source(n.inputs[0]) >= 0)
        g.values[static_cast<size_t>(n.outputs[0])].type.dtype = kUInt8;
      nodes.push_back(std::move(n));
      continue;
    }
    const Candidate& c = s.cands[static_cast<size_t>(k)];
    const int x = n.inputs[0];
    int xq = x;
    float x_scale = 0;
    if (const int src = u8_source(x); src >= 0) {
      x_scale = out_scale(src);
    } else if (auto it = quantized_input.find(x); it != quantized_input.end()) {
      std::tie(xq, x_scale) = it->second;
    } else {
      const quant::Observer& o = s.observers.at(x);
      TensorType t = g.type(x);
      t.dtype = o.is_signed() ? kInt8 : kUInt8;
      x_scale = o.bound() / (o.is_signed() ? 127.f : 255.f);
      xq = g.add_value(t);
      Node q;
      q.kind = "quantize_static";
      q.inputs = {x};
      q.outputs = {xq};
      q.attrs = {{"scale", static_cast<double>(x_scale)}};
      q.scope = n.scope;
      nodes.push_back(std::move(q));
      quantized_input[x] = {xq, x_scale};
    }
    const Constant weight = g.constants[static_cast<size_t>(c.weight.constant)];
    const Tensor w = c.conv || c.weight.transposed ? weight.data : weight.data.t();  // [out, ...]
    auto [wq, ws] = quantize_weight(w);
    const int wq_v = g.add_value(TensorType::of(wq)), ws_v = g.add_value(TensorType::of(ws));
    g.constants.push_back({passes_detail::fresh_constant_name(g, weight.name + ".int8"), wq_v, weight.kind, wq});
    g.constants.push_back({passes_detail::fresh_constant_name(g, weight.name + ".scale"), ws_v, weight.kind, ws});
    Node q;
    q.kind = c.conv ? "conv2d_int8" : "linear_int8";
    q.inputs = {xq, wq_v, ws_v};
    if (c.bias != kNoValue) q.inputs.push_back(c.bias);
    q.outputs = n.outputs;
    for (const Attr& a : n.attrs)
      if (a.name != "kernel" && a.name != "output_layout" && a.name != "alpha" && a.name != "beta") q.attrs.push_back(a);
    q.attrs.push_back({"input_scale", static_cast<double>(x_scale)});
    if (emits_u8[static_cast<size_t>(k)]) {
      g.values[static_cast<size_t>(n.outputs[0])].type.dtype = kUInt8;
      q.attrs.push_back({"output_scale", static_cast<double>(out_scale(k))});
    }
    q.scope = n.scope;
    q.sym_attrs = n.sym_attrs;
    nodes.push_back(std::move(q));
    r.quantized.push_back(fmt::format("{} ({}{})", c.where, weight.name,
                                      emits_u8[static_cast<size_t>(k)] ? ", uint8 out" : ", float out"));
  }
  g.nodes = std::move(nodes);
  // Float convs whose readers changed: their layouts are decided again.
  for (Node& n : g.nodes)
    n.attrs.erase(std::remove_if(n.attrs.begin(), n.attrs.end(), [](const Attr& a) { return a.name == "output_layout"; }),
                  n.attrs.end());
  r.graph = propagate_layouts(eliminate_dead_code(g));
  check_graph(r.graph, "jit::quantize_static");
  return r;
}

}  // namespace ember::jit

namespace ember::quant {

jit::StaticCalibration prepare(nn::Module& module, const std::vector<Tensor>& example_inputs,
                               jit::StaticQuantConfig config) {
  jit::TraceOptions opts;
  for (size_t i = 0; i < example_inputs.size(); ++i) opts.dynamic_dims.push_back({i, 0, "batch"});
  module.eval();
  return jit::StaticCalibration(jit::optimize(jit::trace(module, example_inputs, opts), 2).graph, std::move(config));
}

}  // namespace ember::quant

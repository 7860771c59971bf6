#include "ember/jit/passes/quantize_dynamic.h"

#include <fmt/format.h>

#include <array>
#include <map>

#include "ember/jit/passes/dead_code.h"
#include "ember/quant/qlinear.h"
#include "ember/quant/quantize_dynamic.h"
#include "rewrite.h"

namespace ember::jit {

std::string DynamicQuantizeResult::str() const { return quant::report_str("quantized to int8", quantized, kept_float); }

namespace {

using passes_detail::constant_index;
using passes_detail::find_weight;
using passes_detail::producers;
using passes_detail::WeightRef;

// Weight constant -> the values of its int8 copy, scales and row sums: one
// copy per float weight, however many products read it.
using PackedWeights = std::map<int, std::array<int, 3>>;

// The int8 parts of constant `c` ([N, K], or [K, N] when `transpose`) as new constants.
std::array<int, 3> packed_weight(Graph& g, int c, bool transpose, PackedWeights& packed) {
  if (auto it = packed.find(c); it != packed.end()) return it->second;
  const Constant weight = g.constants[static_cast<size_t>(c)];
  const Tensor wt = transpose ? weight.data.t() : weight.data;  // [N, K]
  const quant::PackedLinear p = quant::PackedLinear::pack(wt.contiguous(), Tensor());
  std::array<int, 3> ids{};
  const std::array<std::pair<const char*, Tensor>, 3> parts{
      {{".int8", p.weight}, {".scale", p.scale}, {".col_sum", p.col_sum}}};
  for (size_t k = 0; k < parts.size(); ++k) {
    const Tensor& t = parts[k].second;
    ids[k] = g.add_value(TensorType::of(t));
    g.constants.push_back(
        {passes_detail::fresh_constant_name(g, weight.name + parts[k].first), ids[k], weight.kind, t.contiguous()});
  }
  packed.emplace(c, ids);
  return ids;
}

// Why an rnn_layer node stays float; empty when its weights can be int8.
std::string check_rnn_layer(const Graph& g, const Node& n, const std::vector<int>& cidx) {
  if (n.inputs.size() < 6 || n.outputs.size() != 3 || n.inputs[0] == kNoValue || n.inputs[4] == kNoValue ||
      n.inputs[5] == kNoValue)
    return "a recurrent layer (rnn_layer) without the usual operands";
  for (int w : {n.inputs[4], n.inputs[5]}) {
    const int c = cidx[static_cast<size_t>(w)];
    if (c < 0) return "a recurrent layer (rnn_layer) whose weights are not constants";
    const Tensor& t = g.constants[static_cast<size_t>(c)].data;
    if (t.dtype() != kFloat32 || t.dim() != 2) return "a recurrent layer (rnn_layer) whose weights are not float32 matrices";
  }
  for (size_t i = 6; i < n.inputs.size() && i < 8; ++i)
    if (n.inputs[i] != kNoValue && g.type(n.inputs[i]).dtype != kFloat32)
      return "a recurrent layer (rnn_layer) whose biases are not float32";
  if (g.type(n.inputs[0]).dtype != kFloat32) return "a recurrent layer (rnn_layer) on a non-float32 input";
  return {};
}

}  // namespace

DynamicQuantizeResult quantize_dynamic(const Graph& in) { return quantize_dynamic(in, quant::default_reduce_range()); }

DynamicQuantizeResult quantize_dynamic(const Graph& in, bool reduce_range) {
  DynamicQuantizeResult r;
  Graph g = in;
  const std::vector<int> producer = producers(g);
  const std::vector<int> cidx = constant_index(g);
  // One int8 copy per float weight, however many products read it (an LSTM's
  // W_hh once per step).
  PackedWeights packed;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string where = g.nodes[i].scope.empty() ? fmt::format("node {}", i) : g.nodes[i].scope;
    auto keep = [&](std::string why) { r.kept_float.emplace_back(where, std::move(why)); };
    if (!g.nodes[i].subgraphs.empty()) {
      keep(fmt::format("a {} node: products inside its sub-graphs read their weights as inputs, not constants",
                       g.nodes[i].kind));
      continue;
    }
    if (g.nodes[i].kind == "rnn_layer") {
      // Recurrent layers trace as one node (ember::rnn_layer): both
      // projections become int8 inside it (quant::rnn_layer_dynamic_int8).
      const Node n = g.nodes[i];
      const std::string why = check_rnn_layer(g, n, cidx);
      if (!why.empty()) {
        keep(why);
        continue;
      }
      Node q;
      q.kind = kRnnLayerDynamicInt8;
      q.inputs = {n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]};
      for (int w : {n.inputs[4], n.inputs[5]}) {
        const std::array<int, 3> ids = packed_weight(g, cidx[static_cast<size_t>(w)], false, packed);
        q.inputs.insert(q.inputs.end(), ids.begin(), ids.end());
      }
      q.inputs.push_back(n.inputs.size() > 6 ? n.inputs[6] : kNoValue);
      q.inputs.push_back(n.inputs.size() > 7 ? n.inputs[7] : kNoValue);
      q.outputs = n.outputs;
      q.attrs = n.attrs;
      q.attrs.push_back({"reduce_range", reduce_range});
      q.scope = n.scope;
      q.sym_attrs = n.sym_attrs;
      g.nodes[i] = std::move(q);
      const std::string& wih = g.constants[static_cast<size_t>(cidx[static_cast<size_t>(n.inputs[4])])].name;
      const std::string& whh = g.constants[static_cast<size_t>(cidx[static_cast<size_t>(n.inputs[5])])].name;
      r.quantized.push_back(fmt::format("{} ({}, {})", where, wih, whh));
      continue;
    }
    if (g.nodes[i].kind != "matmul") continue;
    const Node n = g.nodes[i];
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue || n.inputs[0] == kNoValue ||
        n.inputs[1] == kNoValue) {
      keep("matmul without the usual operands");
      continue;
    }
    const TensorType& yt = g.type(n.outputs[0]);
    if (yt.dtype != kFloat32 || yt.shape.size() != 2 || g.type(n.inputs[0]).shape.size() != 2) {
      keep(fmt::format("not a 2-D float32 product ({})", yt.str()));
      continue;
    }
    if (n.attr_scalar("alpha").to_double() != 1.0 || n.attr_scalar("beta").to_double() != 0.0) {
      keep("a scaled or accumulating product (alpha != 1 or beta != 0)");
      continue;
    }
    const WeightRef w = find_weight(g, n.inputs[1], producer, cidx);
    if (w.constant < 0) {
      keep("its second operand is not a constant weight (a product of two activations)");
      continue;
    }
    const int out_features = static_cast<int>(yt.shape[1].size);
    const int bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    if (bias != kNoValue && (g.type(bias).dtype != kFloat32 || g.type(bias).sizes() != std::vector<int64_t>{out_features})) {
      keep("its bias is not float32 [out_features]");
      continue;
    }
    const Constant weight = g.constants[static_cast<size_t>(w.constant)];
    if (weight.data.dtype() != kFloat32) {
      keep(fmt::format("its weight '{}' is {}, not float32", weight.name, to_string(weight.data.dtype())));
      continue;
    }
    const std::array<int, 3> ids = packed_weight(g, w.constant, !w.transposed, packed);
    Node q;
    q.kind = kLinearDynamicInt8;
    q.inputs = {n.inputs[0], ids[0], ids[1], ids[2]};
    if (bias != kNoValue) q.inputs.push_back(bias);
    q.outputs = n.outputs;
    q.attrs.push_back({"reduce_range", reduce_range});
    if (const AttrValue* act = n.find("activation")) q.attrs.push_back({"activation", *act});
    q.scope = n.scope;
    g.nodes[i] = std::move(q);
    r.quantized.push_back(fmt::format("{} ({})", where, weight.name));
  }
  r.graph = eliminate_dead_code(g);
  check_graph(r.graph, "jit::quantize_dynamic");
  return r;
}

}  // namespace ember::jit

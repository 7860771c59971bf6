#include "ember/jit/passes/quantize_dynamic.h"

#include <fmt/format.h>

#include <array>
#include <map>

#include "ember/jit/passes/dead_code.h"
#include "ember/quant/qlinear.h"
#include "rewrite.h"

namespace ember::jit {

std::string DynamicQuantizeResult::str() const {
  std::string s = fmt::format("quantized to int8 ({}):", quantized.size());
  for (const std::string& q : quantized) s += "\n  " + q;
  s += fmt::format("\nkept in float ({}):", kept_float.size());
  for (const auto& [where, why] : kept_float) s += fmt::format("\n  {}: {}", where, why);
  return s;
}

namespace {

using passes_detail::constant_index;
using passes_detail::find_weight;
using passes_detail::producers;
using passes_detail::WeightRef;

}  // namespace

DynamicQuantizeResult quantize_dynamic(const Graph& in) { return quantize_dynamic(in, quant::default_reduce_range()); }

DynamicQuantizeResult quantize_dynamic(const Graph& in, bool reduce_range) {
  DynamicQuantizeResult r;
  Graph g = in;
  const std::vector<int> producer = producers(g);
  const std::vector<int> cidx = constant_index(g);
  // One int8 copy per float weight, however many products read it (an LSTM's
  // W_hh once per step).
  std::map<int, std::array<int, 3>> packed;  // weight constant -> (int8, scale, col_sum) values
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string where = g.nodes[i].scope.empty() ? fmt::format("node {}", i) : g.nodes[i].scope;
    auto keep = [&](std::string why) { r.kept_float.emplace_back(where, std::move(why)); };
    if (!g.nodes[i].subgraphs.empty()) {
      keep(fmt::format("a {} node: products inside its sub-graphs read their weights as inputs, not constants",
                       g.nodes[i].kind));
      continue;
    }
    if (g.nodes[i].kind == "rnn_layer") {
      // Since recurrent layers trace as one node (ember::rnn_layer), their
      // projections are no longer matmul nodes; an int8 rnn_layer is to come.
      keep("a recurrent layer (rnn_layer): its projections run inside the layer, which has no int8 form yet");
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
    auto it = packed.find(w.constant);
    if (it == packed.end()) {
      const Tensor wt = w.transposed ? weight.data : weight.data.t();  // [N, K]
      const quant::PackedLinear p = quant::PackedLinear::pack(wt.contiguous(), Tensor());
      std::array<int, 3> ids{};
      const std::array<std::pair<const char*, Tensor>, 3> parts{
          {{".int8", p.weight}, {".scale", p.scale}, {".col_sum", p.col_sum}}};
      for (size_t k = 0; k < parts.size(); ++k) {
        const Tensor& t = parts[k].second;
        ids[k] = g.add_value(TensorType::of(t));
        g.constants.push_back({passes_detail::fresh_constant_name(g, weight.name + parts[k].first), ids[k],
                               weight.kind, t.contiguous()});
      }
      it = packed.emplace(w.constant, ids).first;
    }
    Node q;
    q.kind = kLinearDynamicInt8;
    q.inputs = {n.inputs[0], it->second[0], it->second[1], it->second[2]};
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

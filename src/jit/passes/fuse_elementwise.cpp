#include "ember/jit/passes/fuse_elementwise.h"

#include <algorithm>

#include "ember/jit/interpreter.h"
#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

namespace {

// One element, any rank: broadcasts over a chunk as a scalar.
bool is_single(const TensorType& t) {
  for (const Dim& d : t.shape)
    if (d.is_symbolic() || d.size != 1) return false;
  return true;
}

// A node that may be a step of a chain producing values of type `t`.
bool is_step(const Graph& g, const Node& n) {
  if (!is_chainable_elementwise(n.kind) || n.outputs.size() != 1 || n.outputs[0] == kNoValue || n.inputs.empty() ||
      n.inputs.size() > 2 || !n.sym_attrs.empty() || !n.subgraphs.empty())
    return false;
  const TensorType& t = g.type(n.outputs[0]);
  if (t.dtype != kFloat32 && t.dtype != kFloat64) return false;
  for (int v : n.inputs)
    if (v == kNoValue || g.type(v).dtype != t.dtype || (g.type(v) != t && !is_single(g.type(v)))) return false;
  for (const Attr& a : n.attrs)
    if (a.name != "a" && a.name != "b") return false;
  return true;
}

}  // namespace

Graph fuse_elementwise(const Graph& in) {
  Graph g = in;
  const std::vector<int> uses = passes_detail::use_counts(g);
  // The node reading each value (the last one; with one use, the only one).
  std::vector<int> reader(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v != kNoValue) reader[static_cast<size_t>(v)] = static_cast<int>(i);
  std::vector<char> in_chain(g.nodes.size(), 0), drop(g.nodes.size(), 0);
  auto next = [&](size_t i) -> int {
    const int y = g.nodes[i].outputs[0];
    if (uses[static_cast<size_t>(y)] != 1) return -1;
    const int r = reader[static_cast<size_t>(y)];
    // A node joins one chain only (an add of two chains' values ends the first).
    if (r < 0 || in_chain[static_cast<size_t>(r)] || !is_step(g, g.nodes[static_cast<size_t>(r)])) return -1;
    const Node& n = g.nodes[static_cast<size_t>(r)];
    if (n.inputs.size() == 2 && n.inputs[0] == n.inputs[1]) return -1;  // x * x: both operands are the chain
    if (g.type(n.outputs[0]) != g.type(y)) return -1;
    return r;
  };
  for (size_t head = 0; head < g.nodes.size(); ++head) {
    if (in_chain[head] || !is_step(g, g.nodes[head])) continue;
    std::vector<size_t> chain{head};
    for (int r = next(head); r >= 0; r = next(static_cast<size_t>(r))) chain.push_back(static_cast<size_t>(r));
    if (chain.size() < 2) continue;
    Node fused;
    fused.kind = "fused_elementwise";
    fused.scope = g.nodes[chain.back()].scope;
    fused.outputs = g.nodes[chain.back()].outputs;
    std::string ops;
    std::vector<int64_t> operands;
    int chain_value = kNoValue;
    for (size_t j = 0; j < chain.size(); ++j) {
      const Node& n = g.nodes[chain[j]];
      ops += (j ? "," : "") + n.kind;
      for (size_t k = 0; k < 2; ++k) {
        if (k >= n.inputs.size()) {
          operands.push_back(-2);
        } else if (n.inputs[k] == chain_value) {
          operands.push_back(-1);
        } else {
          auto it = std::find(fused.inputs.begin(), fused.inputs.end(), n.inputs[k]);
          operands.push_back(it - fused.inputs.begin());
          if (it == fused.inputs.end()) fused.inputs.push_back(n.inputs[k]);
        }
      }
      for (const Attr& a : n.attrs) fused.attrs.push_back({a.name + std::to_string(j), a.value});
      chain_value = n.outputs[0];
      in_chain[chain[j]] = 1;
      if (j + 1 < chain.size()) drop[chain[j]] = 1;
    }
    fused.attrs.push_back({"ops", ops});
    fused.attrs.push_back({"operands", operands});
    // At the last step's place: every outside operand is defined by then.
    g.nodes[chain.back()] = std::move(fused);
  }
  passes_detail::drop_nodes(g, drop);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

#include "ember/jit/passes/dead_code.h"

namespace ember::jit {

Graph eliminate_dead_code(const Graph& g) {
  std::vector<char> live(g.values.size(), 0);
  auto mark = [&](int v) {
    if (v != kNoValue) live[static_cast<size_t>(v)] = 1;
  };
  for (const NamedValue& o : g.outputs) mark(o.value);
  std::vector<char> keep(g.nodes.size(), 0);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    for (int o : n.outputs)
      if (o != kNoValue && live[static_cast<size_t>(o)]) keep[i] = 1;
    if (keep[i])
      for (int in : n.inputs) mark(in);
  }
  for (const NamedValue& in : g.inputs) mark(in.value);  // the signature stays whole
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i])
      for (int o : g.nodes[i].outputs) mark(o);

  // Renumber in definition order: inputs, constants, node outputs.
  Graph out;
  std::vector<int> remap(g.values.size(), kNoValue);
  auto map = [&](int v) {
    if (v == kNoValue) return kNoValue;
    if (remap[static_cast<size_t>(v)] == kNoValue) remap[static_cast<size_t>(v)] = out.add_value(g.type(v));
    return remap[static_cast<size_t>(v)];
  };
  for (const NamedValue& in : g.inputs) out.inputs.push_back({in.name, map(in.value)});
  for (const Constant& c : g.constants) {
    if (!live[static_cast<size_t>(c.value)]) continue;
    Constant k = c;
    k.value = map(c.value);
    out.constants.push_back(std::move(k));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!keep[i]) continue;
    Node n = g.nodes[i];
    // A control-flow node is kept whole (its sub-graphs fix its signature);
    // inside, each sub-graph loses its own dead code.
    for (std::shared_ptr<const Graph>& sub : n.subgraphs)
      if (sub) sub = std::make_shared<const Graph>(eliminate_dead_code(*sub));
    for (int& v : n.inputs) v = v == kNoValue ? kNoValue : remap[static_cast<size_t>(v)];
    for (int& v : n.outputs) v = map(v);
    out.nodes.push_back(std::move(n));
  }
  for (const NamedValue& o : g.outputs) out.outputs.push_back({o.name, remap[static_cast<size_t>(o.value)]});
  return out;
}

}  // namespace ember::jit

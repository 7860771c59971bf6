#include "ember/jit/passes/constant_fold.h"

#include "ember/jit/interpreter.h"
#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

Graph fold_constants(const Graph& in) {
  Graph g = in;
  std::vector<char> is_const(g.values.size(), 0);
  for (const Constant& c : g.constants) is_const[static_cast<size_t>(c.value)] = 1;
  std::vector<Node> kept;
  for (const Node& n : g.nodes) {
    // Control flow is not folded: a loop over constants could run for ever at export.
    bool foldable = n.kind != "as_strided" && n.subgraphs.empty() && n.sym_attrs.empty() && !n.inputs.empty();
    for (int v : n.inputs) foldable = foldable && (v == kNoValue || is_const[static_cast<size_t>(v)]);
    for (int v : n.outputs) foldable = foldable && (v == kNoValue || !passes_detail::has_symbolic_dim(g.type(v)));
    if (!foldable) {
      kept.push_back(n);
      continue;
    }
    // The node alone, over the constants it reads.
    Graph sub;
    sub.values = g.values;
    for (const Constant& c : g.constants)
      for (int v : n.inputs)
        if (v == c.value) {
          sub.constants.push_back(c);
          break;
        }
    sub.nodes = {n};
    for (int v : n.outputs)
      if (v != kNoValue) sub.outputs.push_back({"", v});
    std::vector<Tensor> results = run(sub, {});
    for (size_t i = 0; i < sub.outputs.size(); ++i) {
      Constant k;
      k.name = passes_detail::fresh_constant_name(g, "folded." + std::to_string(g.constants.size()));
      k.value = sub.outputs[i].value;
      k.kind = Constant::Kind::Inline;
      k.data = results[i].contiguous();
      is_const[static_cast<size_t>(k.value)] = 1;
      g.constants.push_back(std::move(k));
    }
  }
  g.nodes = std::move(kept);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

#include "ember/jit/passes/select_kernels.h"

#include "rewrite.h"

namespace ember::jit {

Graph select_kernels(const Graph& in) {
  Graph g = in;
  // Constants and views of them (a linear's transposed weight).
  std::vector<char> fixed(g.values.size(), 0);
  for (const Constant& c : g.constants) fixed[static_cast<size_t>(c.value)] = 1;
  for (const Node& n : g.nodes)
    if (n.kind == "as_strided" && n.inputs.size() == 1 && n.inputs[0] != kNoValue && n.outputs.size() == 1 &&
        n.outputs[0] != kNoValue && n.sym_attrs.empty())
      fixed[static_cast<size_t>(n.outputs[0])] = fixed[static_cast<size_t>(n.inputs[0])];
  auto is_fixed = [&](const Node& n, size_t i) {
    return i >= n.inputs.size() || n.inputs[i] == kNoValue || fixed[static_cast<size_t>(n.inputs[i])];
  };
  for (Node& n : g.nodes) {
    if ((n.kind != "conv2d" && n.kind != "matmul") || n.find("kernel") || n.inputs.size() < 2 ||
        n.inputs[1] == kNoValue || n.outputs.empty() || n.outputs[0] == kNoValue)
      continue;
    if (g.type(n.outputs[0]).dtype != kFloat32 || !is_fixed(n, 1) || !is_fixed(n, 2)) continue;
    n.attrs.push_back({"kernel", std::string("prepared")});
  }
  return g;
}

}  // namespace ember::jit

#include "ember/jit/passes/fuse_residual.h"

#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

namespace {

bool is_fusable_conv(const Node& n) {
  return n.kind == "conv2d" && n.outputs.size() == 1 && n.outputs[0] != kNoValue && n.inputs.size() >= 2 &&
         n.inputs.size() <= 3 && !n.find("pool") && !n.find("residual") && !n.find("post_activation");
}

}  // namespace

Graph fuse_residual_add(const Graph& in) {
  Graph g = in;
  const std::vector<int> uses = passes_detail::use_counts(g);
  const std::vector<int> producer = passes_detail::producers(g);
  std::vector<char> drop(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& add = g.nodes[i];
    if (add.kind != "add" || !add.attrs.empty() || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.outputs[0] == kNoValue || add.inputs[0] == kNoValue || add.inputs[1] == kNoValue ||
        add.inputs[0] == add.inputs[1])
      continue;
    for (int side = 0; side < 2; ++side) {
      const int y = add.inputs[static_cast<size_t>(side)], r = add.inputs[static_cast<size_t>(1 - side)];
      const int p = producer[static_cast<size_t>(y)];
      if (p < 0 || drop[static_cast<size_t>(p)] || uses[static_cast<size_t>(y)] != 1 ||
          !is_fusable_conv(g.nodes[static_cast<size_t>(p)]))
        continue;
      if (g.type(r) != g.type(y) || g.type(y) != g.type(add.outputs[0])) continue;
      // The conv moves to the add's place: its operands are all defined
      // before it, and its output had no reader but the add.
      Node conv = g.nodes[static_cast<size_t>(p)];
      conv.inputs.resize(3, kNoValue);
      conv.inputs.push_back(r);
      conv.attrs.push_back({"residual", true});
      conv.outputs[0] = add.outputs[0];
      drop[static_cast<size_t>(p)] = 1;
      g.nodes[i] = std::move(conv);
      break;
    }
  }
  passes_detail::drop_nodes(g, drop);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

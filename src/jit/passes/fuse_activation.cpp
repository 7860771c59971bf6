#include "ember/jit/passes/fuse_activation.h"

#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

bool is_fusable_activation(const std::string& kind) {
  return kind == "relu" || kind == "silu" || kind == "gelu" || kind == "gelu_tanh";
}

Graph fuse_activations(const Graph& in) {
  Graph g = in;
  const std::vector<int> uses = passes_detail::use_counts(g);
  const std::vector<int> producer = passes_detail::producers(g);
  std::vector<char> drop(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& act = g.nodes[i];
    if (!is_fusable_activation(act.kind) || !act.attrs.empty() || act.inputs.size() != 1 ||
        act.outputs.size() != 1 || act.inputs[0] == kNoValue || act.outputs[0] == kNoValue)
      continue;
    const int x = act.inputs[0];
    const int p = producer[static_cast<size_t>(x)];
    if (p < 0 || uses[static_cast<size_t>(x)] != 1) continue;
    Node& k = g.nodes[static_cast<size_t>(p)];
    if ((k.kind != "conv2d" && k.kind != "matmul") || k.outputs.size() != 1 || k.find("pool")) continue;
    if (g.type(x) != g.type(act.outputs[0])) continue;
    // After a fused residual add the activation comes last (post_activation).
    const char* slot = k.find("residual") ? "post_activation" : "activation";
    if (k.find(slot)) continue;
    k.attrs.push_back({slot, act.kind});
    k.outputs[0] = act.outputs[0];
    drop[i] = 1;
  }
  passes_detail::drop_nodes(g, drop);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

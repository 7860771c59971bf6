#include "ember/jit/passes/fuse_pool.h"

#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

namespace {

bool is_fusable_pool(const Node& n) {
  return (n.kind == "max_pool2d" || n.kind == "avg_pool2d") && n.inputs.size() == 1 && n.outputs.size() == 1 &&
         n.inputs[0] != kNoValue && n.outputs[0] != kNoValue && n.sym_attrs.empty() && !n.find("pool");
}

}  // namespace

Graph fuse_pooling(const Graph& in) {
  Graph g = in;
  const std::vector<int> uses = passes_detail::use_counts(g);
  const std::vector<int> producer = passes_detail::producers(g);
  std::vector<char> drop(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& pool = g.nodes[i];
    if (!is_fusable_pool(pool)) continue;
    const int x = pool.inputs[0];
    const int p = producer[static_cast<size_t>(x)];
    if (p < 0 || uses[static_cast<size_t>(x)] != 1) continue;
    Node& conv = g.nodes[static_cast<size_t>(p)];
    // A conv with a fused residual add stays unpooled (its epilogue needs the
    // full-size output).
    if (conv.kind != "conv2d" || conv.outputs.size() != 1 || conv.find("pool") || conv.find("residual")) continue;
    if (g.type(x).dtype != g.type(pool.outputs[0]).dtype) continue;
    conv.attrs.push_back({"pool", std::string(pool.kind == "max_pool2d" ? "max" : "avg")});
    for (const Attr& a : pool.attrs) conv.attrs.push_back({"pool_" + a.name, a.value});
    conv.outputs[0] = pool.outputs[0];
    drop[i] = 1;
  }
  passes_detail::drop_nodes(g, drop);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

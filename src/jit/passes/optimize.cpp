#include "ember/jit/passes/optimize.h"

#include <fmt/format.h>

#include "ember/core/error.h"
#include "ember/jit/passes/constant_fold.h"
#include "ember/jit/passes/dead_code.h"
#include "ember/jit/passes/fold_batch_norm.h"
#include "ember/jit/passes/fuse_elementwise.h"
#include "ember/jit/passes/fuse_activation.h"
#include "ember/jit/passes/fuse_pool.h"
#include "ember/jit/passes/fuse_residual.h"
#include "ember/jit/passes/identity.h"
#include "ember/jit/passes/propagate_layouts.h"
#include "ember/jit/passes/select_kernels.h"

namespace ember::jit {

std::string OptimizeResult::str() const {
  std::string s;
  for (const PassRecord& p : passes)
    s += fmt::format("{}: {} -> {} nodes, {} -> {} constants\n", p.pass, p.nodes_before, p.nodes_after,
                     p.constants_before, p.constants_after);
  return s;
}

OptimizeResult optimize(const Graph& g, int level, OptimizeTarget target) {
  EMBER_CHECK(level >= 0 && level <= kMaxOptimizeLevel, "jit::optimize: level must be 0 to {}, got {}",
              kMaxOptimizeLevel, level);
  OptimizeResult r;
  r.level = level;
  r.graph = g;
  auto apply = [&](const char* name, Graph (*pass)(const Graph&)) {
    PassRecord rec{name, static_cast<int64_t>(r.graph.nodes.size()), 0,
                   static_cast<int64_t>(r.graph.constants.size()), 0};
    r.graph = pass(r.graph);
    rec.nodes_after = static_cast<int64_t>(r.graph.nodes.size());
    rec.constants_after = static_cast<int64_t>(r.graph.constants.size());
    r.passes.push_back(rec);
  };
  if (level >= 1) {
    apply("eliminate_dead_code", eliminate_dead_code);
    apply("remove_identities", remove_identities);
    apply("fold_constants", fold_constants);
    apply("fold_batch_norm", fold_batch_norm);
  }
  if (level >= 2 && target == OptimizeTarget::portable) {
    apply("fuse_activations", fuse_activations);
    apply("fuse_pooling", fuse_pooling);
  } else if (level >= 2) {
    apply("fuse_activations", fuse_activations);
    apply("fuse_residual_add", fuse_residual_add);
    apply("fuse_activations", fuse_activations);  // the activation after a fused residual add
    apply("fuse_pooling", fuse_pooling);
    apply("fuse_elementwise", fuse_elementwise);
    apply("select_kernels", select_kernels);
    apply("propagate_layouts", propagate_layouts);
  }
  // Sub-graphs get the same passes; they hold no constants (Note [control
  // flow]), so folding finds nothing in them, but identities and fusions do.
  if (level >= 1)
    for (Node& n : r.graph.nodes)
      for (std::shared_ptr<const Graph>& sub : n.subgraphs) sub = std::make_shared<const Graph>(optimize(*sub, level, target).graph);
  check_graph(r.graph, "jit::optimize");
  return r;
}

}  // namespace ember::jit

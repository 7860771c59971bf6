// jit::optimize: the passes by level, like ONNX Runtime's.
//   0: none (the traced graph, bitwise equal to eager)
//   1: safe rewrites: identity removal, constant folding, BatchNorm folded into
//      the conv before it, DCE after each (numerics within fp32 rounding)
//   2: level 1 + conv2d/matmul + activation fusion, conv2d + residual add
//      fusion (and the activation after it), conv2d + pooling fusion,
//      elementwise chains fused into one pass, then
//      select_kernels: a prepared graph runs conv2d/matmul nodes through
//      prepared oneDNN kernels with post-ops (Note [prepared kernels]),
//      and propagate_layouts: activations between prepared convs stay in
//      oneDNN's blocked layout (Note [layout propagation])
// The sub-graphs of cond / while_loop nodes are optimised at the same level
// (their PassRecords are not listed).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit {

struct PassRecord {
  std::string pass;
  int64_t nodes_before = 0, nodes_after = 0;
  int64_t constants_before = 0, constants_after = 0;
};

struct OptimizeResult {
  Graph graph;
  int level = 0;
  std::vector<PassRecord> passes;
  // "remove_identities: 19 -> 12 nodes, ..." one line per pass.
  std::string str() const;
};

constexpr int kMaxOptimizeLevel = 2;

// What the graph is optimised for. Ember's runtime gets every pass of the
// level; a graph for another runtime (ONNX export) only the portable ones:
// level 2 stops after the activation and pooling fusions, since residual-add
// fusion, fused elementwise chains and prepared kernels are Ember's own
// (their nodes have no ONNX form, and the other runtime fuses for itself).
enum class OptimizeTarget { ember_runtime, portable };

// Throws for a level outside 0..kMaxOptimizeLevel.
OptimizeResult optimize(const Graph& g, int level, OptimizeTarget target = OptimizeTarget::ember_runtime);

}  // namespace ember::jit

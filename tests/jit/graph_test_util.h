// Building blocks for hand-made graphs, and counts of node kinds, in the jit
// and quant tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit::testing {

inline Node node(std::string kind, std::vector<int> in, std::vector<int> out) {
  Node n;
  n.kind = std::move(kind);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// How many nodes of g have this kind.
inline int64_t count_kind(const Graph& g, const std::string& kind) {
  int64_t n = 0;
  for (const Node& node : g.nodes) n += node.kind == kind;
  return n;
}

}  // namespace ember::jit::testing

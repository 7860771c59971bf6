// Building blocks for hand-made graphs in the jit tests.
#pragma once

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

}  // namespace ember::jit::testing

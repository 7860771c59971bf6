// Control-flow nodes ("cond", "while_loop") in the graph: validation and
// execution (Note [control flow] in src/jit/ir/control_flow.cpp).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/graph.h"
#include "ember/jit/interpreter.h"

namespace ember::jit {

// Throws with `where` (the file or "trace", and the node) when a node's
// sub-graphs do not fit it; recurses into them with check_graph. A node of
// any other kind must hold no sub-graphs.
void check_control_flow(const Graph& g, const Node& n, const std::string& where);

// Runs control-flow node `n` (node `index` of its graph) on its inputs with
// its sub-graphs prepared as `subgraphs` (one per Node::subgraphs entry);
// returns its outputs, none of which shares memory with an input.
std::vector<Tensor> run_control_flow(const Node& n, size_t index, const std::vector<Tensor>& inputs,
                                     std::vector<PreparedGraph>& subgraphs);

}  // namespace ember::jit

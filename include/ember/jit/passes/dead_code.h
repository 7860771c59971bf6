// Dead-code elimination: drops nodes and constants no graph output depends on
// and renumbers the values densely. Nodes have no side effects (in-place
// writes are new SSA values), so liveness is reachability from the outputs.
// A control-flow node is kept whole (all its inputs and outputs) when any of
// its outputs is live; its sub-graphs are cleaned recursively.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph eliminate_dead_code(const Graph& g);

}  // namespace ember::jit

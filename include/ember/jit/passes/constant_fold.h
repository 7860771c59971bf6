// Constant folding: a node whose inputs are all constants (and whose outputs
// have fixed shapes) is run once through the interpreter and its outputs
// become inline constants ("folded.N"); then DCE. Views are not folded: a
// view of a weight is free at run time, folding it would store a copy.
// Control-flow nodes are not folded (a loop over constants runs at run time,
// not at export).
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fold_constants(const Graph& g);

}  // namespace ember::jit

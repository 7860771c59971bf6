// The first runtime: runs a Graph node by node through the same kernels the
// traced ops called (Note [jit interpreter] in src/jit/interpreter.cpp).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit {

// Runs g on `inputs` (in the order of g.inputs) and returns its outputs in the
// order of g.outputs. Inputs are checked against the signature (count, dtype,
// rank, fixed sizes); every node's arguments are checked before its kernel
// runs, so a malformed graph from a file fails with the node and the problem.
std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs);

// Whether run() has a replay for this node kind (an ops.def name or "as_strided").
bool interpreter_supports(const std::string& kind);

// Throws naming the input, the expected type (with symbolic dims) and what it got.
void check_inputs(const Graph& g, const std::vector<Tensor>& inputs);

}  // namespace ember::jit

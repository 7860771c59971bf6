// Elementwise chains fused into one pass: a run of elementwise nodes (add,
// sub, mul, div, pow, maximum, minimum, clamp and the float unary ops: relu,
// silu, gelu, exp, tanh, sigmoid, ...) where each result is read only by
// the next node and every node's output has the chain's type, becomes one
// node of kind "fused_elementwise":
//   inputs   the distinct operands from outside the chain (each shaped like
//            the output, or holding one element)
//   ops      "mul,add,relu": the steps in order
//   operands per step two input indices (-1: the chain's value so far,
//            -2: none), e.g. {0, 1, -1, 2, -1, -2}
//   a<j>/b<j> the step's scalar attributes, where the node had them
// The interpreter runs it a cache-sized chunk at a time: every step on one
// chunk, then the next chunk (Note [fused elementwise] in
// src/jit/ir/interpreter.cpp), so the data is read and written once instead
// of once per node. Each step is the node's own kernel: results are bitwise
// those of the unfused graph. Chains of one node are left alone. Then DCE.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fuse_elementwise(const Graph& g);

}  // namespace ember::jit

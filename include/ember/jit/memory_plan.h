// jit::plan_memory: where each intermediate value of a graph lives for one
// binding of its symbolic dims (Note [memory plan] in src/jit/ir/memory_plan.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit {

struct MemoryPlan {
  // One block of the arena; several values may share it one after another.
  struct Block {
    int64_t offset = 0;  // bytes from the arena's start, 64-byte aligned
    int64_t nbytes = 0;
    int first = 0, last = 0;  // the nodes that define it and read it last (inclusive)
  };
  std::vector<Block> blocks;
  // Per value: its block, or -1 when the value is not in the arena (inputs,
  // constants, views, what the graph returns, outputs of ops that allocate
  // their own result).
  std::vector<int> block_of;
  // Per node: the values whose last reader it is (the interpreter drops them
  // after the node, so values outside the arena are freed as early too).
  std::vector<std::vector<int>> dying_after;
  int64_t arena_bytes = 0;      // the arena: the planned peak of the intermediates
  int64_t unshared_bytes = 0;   // what the same values take without reuse
  int64_t planned_values = 0;
  int64_t in_place_values = 0;  // elementwise results written over a dying operand
};

// Liveness over the node order (a view keeps its base alive until the view's
// last reader), elementwise results in place of an operand that dies at that
// node, then blocks placed greedily, largest first, at the lowest offset free
// for their lifetime.
MemoryPlan plan_memory(const Graph& g, const std::vector<std::vector<int64_t>>& value_sizes);

// Whether the interpreter writes this node kind's outputs into buffers it is
// given (the planned ones); other kinds allocate their results.
bool writes_into_given_outputs(const std::string& kind);

}  // namespace ember::jit

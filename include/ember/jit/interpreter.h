// The first runtime: runs a Graph node by node through the same kernels the
// traced ops called (Note [jit interpreter] in src/jit/interpreter.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/jit/graph.h"
#include "ember/jit/memory_plan.h"

namespace ember::jit {

// Runs g on `inputs` (in the order of g.inputs) and returns its outputs in the
// order of g.outputs. Inputs are checked against the signature (count, dtype,
// rank, fixed sizes); every node's arguments are checked before its kernel
// runs, so a malformed graph from a file fails with the node and the problem.
// Prepares the graph for these input sizes on every call; a PreparedGraph
// keeps that work between runs.
std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs);

// Whether run() has a replay for this node kind (an ops.def name, "as_strided",
// "cond" or "while_loop").
bool interpreter_supports(const std::string& kind);

// The ops a "fused_elementwise" step may be (jit::fuse_elementwise): the
// float arithmetic and unary ops (add, mul, relu, exp, ...).
bool is_chainable_elementwise(const std::string& kind);

// Throws naming the input, the expected type (with symbolic dims) and what it got.
void check_inputs(const Graph& g, const std::vector<Tensor>& inputs);
// Whether check_inputs would accept these inputs (a test batch that fits a
// fixed-size graph, say).
bool accepts_inputs(const Graph& g, const std::vector<Tensor>& inputs);
// The symbolic dims' values these inputs give (checked as check_inputs does).
SymbolValues bind_symbols(const Graph& g, const std::vector<Tensor>& inputs);

// A graph prepared for one binding of its symbolic dims: every node with its
// symbolic attributes evaluated, every value's sizes, and the memory plan
// with its arena (allocated once). A steady-state run() allocates only the
// tensors it returns, and outputs of the few ops that allocate their own
// (batch_norm_apply, index_select, cat, cond, while_loop; see
// writes_into_given_outputs). The sub-graphs of control-flow nodes are
// prepared with it, for the same binding (Note [control flow]).
// Not thread-safe: a thread runs its own (runtime::Session keeps a pool).
// The graph must outlive it.
class PreparedGraph {
 public:
  PreparedGraph(const Graph& g, SymbolValues symbols);
  ~PreparedGraph();
  PreparedGraph(PreparedGraph&&) noexcept;
  PreparedGraph& operator=(PreparedGraph&&) noexcept;

  // Inputs must bind the symbols this was prepared for (checked).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  const SymbolValues& symbols() const;
  const MemoryPlan& memory_plan() const;
  // The layout `value` had in the last run: "nchw", or the blocked layout a
  // prepared conv left it in for the next one ("nChw16c"; Note [layout
  // propagation] in src/kernels/cpu/prepared.cpp). For tests and tools.
  std::string layout_name(int value) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ember::jit

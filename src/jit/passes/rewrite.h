// Small helpers the passes share (internal to src/jit/passes).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit::passes_detail {

// Uses of each value: node inputs plus graph outputs.
std::vector<int> use_counts(const Graph& g);

// Rewrites every use (node inputs, graph outputs) of value v to subst[v] where
// subst[v] != kNoValue, following chains (a -> b -> c).
void substitute(Graph& g, const std::vector<int>& subst);

// Index of the node defining each value, or -1 (inputs, constants).
std::vector<int> producers(const Graph& g);

// Removes the nodes i with drop[i] != 0, keeping the order of the rest.
void drop_nodes(Graph& g, const std::vector<char>& drop);

// Index of the constant defining each value, or -1.
std::vector<int> constant_index(const Graph& g);

// Whether a Dim's expression is `expr` ("batch", "72") for sym_attr comparison.
std::string dim_expr(const Dim& d);

// Whether value's type has a symbolic dim.
bool has_symbolic_dim(const TensorType& t);

// The string attribute `name` of n, or "" when it has none or another type.
std::string string_attr(const Node& n, const char* name);

// A constant name not yet used in g: "<stem>", "<stem>.1", ...
std::string fresh_constant_name(const Graph& g, const std::string& stem);

// The constant [N, K] a matmul's second operand reads as W^T ([K, N], strides
// [1, K]: nn::Linear's weight.t()), or a constant [K, N] read directly; -1 if neither.
struct WeightRef {
  int constant = -1;
  bool transposed = false;  // the constant is [N, K]
};
WeightRef find_weight(const Graph& g, int v, const std::vector<int>& producer, const std::vector<int>& cidx);

}  // namespace ember::jit::passes_detail

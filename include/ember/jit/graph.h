// jit::Graph: a traced model as plain data (Note [jit graph] in src/jit/graph.cpp).
// Values are typed SSA names (dtype + shape, dims may be symbolic); nodes are
// kernel invocations named by their ops.def row (plus "as_strided" for views);
// parameters and buffers are named constants (by module path). Passes are
// functions Graph -> Graph (src/jit/passes/).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/core/trace_hook.h"

namespace ember::jit {

// A size that follows the symbolic dims: a sum of integer multiples of
// products of symbols, "batch", "72*batch", "8*batch*seq + -8*batch".
struct SymExpr {
  struct Term {
    int64_t coef = 0;
    std::vector<std::string> symbols;  // sorted; empty: the constant term
  };
  std::vector<Term> terms;
  // Throws naming `text` when it is not such an expression.
  static SymExpr parse(const std::string& text);
  std::string str() const;
  bool is_constant() const;
  // Throws for an unknown symbol or an overflowing value.
  int64_t eval(const std::map<std::string, int64_t>& symbols) const;
};
using SymbolValues = std::map<std::string, int64_t>;

// One dimension: the traced size, and an expression (usually one symbol,
// "batch") when the size follows a dynamic dim.
struct Dim {
  int64_t size = 0;
  std::string symbol;  // empty: a fixed size; else a SymExpr
  bool is_symbolic() const { return !symbol.empty(); }
  bool operator==(const Dim&) const = default;
};

struct TensorType {
  ScalarType dtype = kFloat32;
  std::vector<Dim> shape;
  std::vector<int64_t> sizes() const;
  static TensorType of(const Tensor& t);
  // "float32[batch=2, 10]"
  std::string str() const;
  bool operator==(const TensorType&) const = default;
};

using AttrValue = TraceAttr::Value;
using Attr = TraceAttr;

// Value ids index Graph::values; kNoValue marks an absent optional input or output.
constexpr int kNoValue = -1;

struct Graph;

struct Node {
  std::string kind;         // an ops.def name ("conv2d", "add") or "as_strided"
  std::vector<int> inputs;  // may hold kNoValue (absent optional input)
  std::vector<int> outputs; // may hold kNoValue (an output nobody needs)
  std::vector<Attr> attrs;
  std::string scope;        // module path where known ("encoder.layers.0"), for errors and inspect
  // Integer attributes that follow the dynamic dims: per element a SymExpr
  // (a plain number where the element is fixed); `attrs` holds the traced values.
  struct SymAttr {
    std::string name;
    std::vector<std::string> exprs;
  };
  std::vector<SymAttr> sym_attrs;
  // The sub-graphs of a control-flow node (Note [control flow] in
  // src/jit/ir/control_flow.cpp): "cond" {then, else}, "while_loop" {cond,
  // body}; empty for every other kind. Immutable and shared: copying a node
  // (a pass copying its graph) shares them; a pass that rewrites one makes a
  // new Graph.
  std::vector<std::shared_ptr<const Graph>> subgraphs;

  const AttrValue* find(const std::string& name) const;
  // Typed reads: missing or mistyped attributes throw naming the node and attribute.
  int64_t attr_int(const std::string& name) const;
  double attr_double(const std::string& name) const;
  bool attr_bool(const std::string& name) const;
  Scalar attr_scalar(const std::string& name) const;
  std::optional<Scalar> attr_scalar_opt(const std::string& name) const;
  ScalarType attr_dtype(const std::string& name) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;
};

struct Value {
  TensorType type;
};

struct NamedValue {
  std::string name;
  int value = kNoValue;
};

struct Constant {
  enum class Kind { Parameter, Buffer, Inline };
  std::string name;  // module path for parameters and buffers ("fc.weight"), "constant.N" otherwise
  int value = kNoValue;
  Kind kind = Kind::Inline;
  Tensor data;  // contiguous
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;  // in execution order
  std::vector<NamedValue> inputs;
  std::vector<NamedValue> outputs;
  std::vector<Constant> constants;

  int add_value(TensorType type);
  // The dims' sizes with the symbols bound (the traced sizes when empty).
  std::vector<int64_t> sizes(int value, const SymbolValues& symbols) const;
  // `n` with its symbolic attributes evaluated.
  static Node resolve(const Node& n, const SymbolValues& symbols);
  const TensorType& type(int value) const { return values.at(static_cast<size_t>(value)).type; }
  // Node counts per kind, sorted by kind.
  std::vector<std::pair<std::string, int64_t>> op_counts() const;
  // A readable listing (one line per input, constant and node).
  std::string str() const;
};

// Throws with `what` (a file name, "trace") and the problem when the graph is
// not well formed: a value used before it is defined or defined twice, an id
// out of range, an unknown op kind, a constant whose tensor does not match its
// value's type, a control-flow node whose sub-graphs do not fit it (checked
// recursively).
void check_graph(const Graph& g, const std::string& what = "graph");

// Node kinds the interpreter can run: ops.def rows, "as_strided",
// "fused_elementwise" (jit::fuse_elementwise), "cond", "while_loop", and the
// int8 kinds of jit::quantize_dynamic and jit::quantize_static.
bool is_known_kind(const std::string& kind);

// The kinds jit::quantize_static writes: "quantize_static", "conv2d_int8", "linear_int8".
bool is_static_int8_kind(const std::string& kind);

// "cond" and "while_loop": the kinds that hold sub-graphs.
bool is_control_flow(const std::string& kind);
// The names of a control-flow kind's sub-graphs, in order ({"then", "else"}, {"cond", "body"}).
std::vector<std::string> subgraph_names(const std::string& kind);

std::string attr_str(const AttrValue& v);

}  // namespace ember::jit

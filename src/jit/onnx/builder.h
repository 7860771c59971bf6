// The ONNX graph being written by export_onnx: unique tensor names, nodes,
// initializers, and integer shape tensors computed from symbolic dims
// (Note [onnx symbolic dims] in builder.cpp). Private to src/jit/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit::onnx_export {

// dtype -> onnx::TensorProto::DataType; throws for dtypes ONNX lacks.
int onnx_dtype(ScalarType t);

class Builder {
 public:
  Builder(const Graph& g, onnx::GraphProto& out, int opset);

  int opset() const { return opset_; }
  const Graph& graph() const { return g_; }

  // The node being lowered names what it emits ("features.0/conv2d_3").
  // Also marks where that node's ONNX nodes begin (see finish()).
  void set_prefix(std::string prefix) {
    prefix_ = std::move(prefix);
    first_node_ = out_.node_size();
  }
  // A tensor name nothing else uses, derived from `hint`.
  std::string fresh(const std::string& hint);
  void reserve(const std::string& name) { used_.insert(name); }

  // Adds a node writing `outputs` (fresh names when empty, `n_out` of them).
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        std::vector<std::string> outputs = {}, size_t n_out = 1);
  // One-output node: returns the output's name (`out`, or a fresh one).
  std::string op(const std::string& op, const std::vector<std::string>& inputs, const std::string& out = {});

  std::string initializer(const std::string& name, const Tensor& data);
  std::string const_ints(const std::vector<int64_t>& v);          // 1-D int64
  std::string const_scalar(double v, ScalarType dtype);            // 0-D
  // A 1-D int64 tensor holding `dims` (SymExprs; at most one may be "-1"
  // style left to Reshape by passing minus_one_at). Constant when it can be.
  // allow_infer=false: never -1 (Expand's shape).
  std::string dims(const std::vector<SymExpr>& dims, int minus_one_at = -1, bool allow_infer = true);
  // Makes `x` the tensor named `out`: renames the output of the node that
  // just produced it, or adds an Identity.
  void finish(const std::string& x, const std::string& out);

 private:
  std::string symbol_tensor(const std::string& symbol);

  const Graph& g_;
  onnx::GraphProto& out_;
  int opset_;
  std::string prefix_;
  int first_node_ = 0;
  std::set<std::string> used_;
  std::map<std::string, int> counters_;
  std::map<std::string, std::pair<std::string, int64_t>> symbol_source_;  // symbol -> (input name, dim)
  std::map<std::string, std::string> symbol_tensors_;
  std::map<std::vector<int64_t>, std::string> int_consts_;
};

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v);

// The symbols' traced values (from the graph inputs' dims).
SymbolValues traced_symbols(const Graph& g);
// Each dim of `t` as a SymExpr (its symbol, or its traced size).
std::vector<SymExpr> dim_exprs(const TensorType& t);
SymExpr constant_expr(int64_t v);
// An integer attribute list as SymExprs (the node's symbolic form where it has one).
std::vector<SymExpr> sym_ints(const Node& n, const std::string& name);

}  // namespace ember::jit::onnx_export

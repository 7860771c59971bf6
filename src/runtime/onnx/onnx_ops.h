// The ONNX operators runtime::OnnxModel runs, each a function of its node's
// attributes and input tensors (Note [onnx import] in onnx_model.cpp).
// Private to src/runtime/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::runtime::onnx_import {

// Largest tensor a node may create from shapes it computes (ConstantOfShape,
// Expand, Tile, Range...), in elements: a hostile file must not ask for
// terabytes. Set per model from its file size (at least 2^26).
struct Limits {
  int64_t max_elements = int64_t{1} << 26;
};

struct OpCtx {
  const onnx::NodeProto& node;
  std::vector<Tensor>& in;  // undefined: an absent optional input
  int opset;
  const Limits& limits;

  size_t outputs() const { return static_cast<size_t>(node.output_size()); }
  bool wants(size_t i) const { return i < outputs() && !node.output(static_cast<int>(i)).empty(); }
  bool has(size_t i) const { return i < in.size() && in[i].defined(); }
  const Tensor& input(size_t i) const;

  const onnx::AttributeProto* attr(const std::string& name) const;
  int64_t i(const std::string& name, int64_t def) const;
  float f(const std::string& name, float def) const;
  std::string s(const std::string& name, const std::string& def) const;
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> floats(const std::string& name) const;
  std::vector<std::string> strings(const std::string& name) const;

  [[noreturn]] void fail(const std::string& what) const;
  // A shape or index list from an integer tensor (bounded in length).
  std::vector<int64_t> ints_of(const Tensor& t, const char* what) const;
  // Checks a shape's element count against the limits.
  void check_numel(const std::vector<int64_t>& shape, const char* what) const;
  // An axis in [-rank, rank) made non-negative, or a failure naming it.
  int64_t axis(int64_t a, int64_t rank, const char* what) const;
};

using OpFn = std::vector<Tensor> (*)(OpCtx&);
// nullptr when `op_type` (default domain) is not supported.
OpFn find_op(const std::string& op_type);

// A TensorProto's data (raw_data or the typed fields), checked against its dims.
Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what, const Limits& limits);
ScalarType dtype_from_onnx(int type, const std::string& what);

// LSTM and GRU (onnx_rnn.cpp).
std::vector<Tensor> op_lstm(OpCtx& c);
std::vector<Tensor> op_gru(OpCtx& c);

}  // namespace ember::runtime::onnx_import

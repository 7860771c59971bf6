// One jit node lowered to ONNX nodes (export.cpp drives it). Private to src/jit/onnx.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/onnx/builder.h"

namespace ember::jit::onnx_export {

struct LowerCtx {
  Builder& b;
  const Graph& g;
  const Node& n;
  size_t index;
  std::vector<std::string>& names;  // per value: its ONNX tensor name
  // per value produced by as_strided: its strides (its memory layout, for kernels that read memory order)
  std::map<int, std::vector<int64_t>>& view_strides;
  // per value produced by as_strided: the dense value whose storage it reads
  // and its offset there (a view of a view has strides in that storage)
  std::map<int, std::pair<int, SymExpr>>& view_root;

  const std::string& in(size_t i) const;
  const std::string& out(size_t i) const;
  [[noreturn]] void fail(const std::string& what) const;
};

// The ONNX lowering of `kind`, or nullptr when there is none.
using LowerFn = void (*)(LowerCtx&);
LowerFn find_lowering(const std::string& kind);

void lower_as_strided(LowerCtx& c);
// rnn_layer and arange (rnn.cpp).
void register_composite_lowerings(std::unordered_map<std::string, LowerFn>& table);

}  // namespace ember::jit::onnx_export

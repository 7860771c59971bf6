// Dynamic int8 quantization of a traced graph (the graph form of
// quant::quantize_dynamic): every float32 matmul whose second operand is a
// constant weight (nn::Linear) becomes a linear_dynamic_int8 node: the weight int8 per output channel (symmetric),
// the activation quantized to uint8 per call from its range (Note [dynamic
// int8 linear] in src/kernels/qgemm.h). Recurrent layers (rnn_layer nodes)
// get both projections int8 the same way. The other matmuls stay float and
// are listed with the reason.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit {

struct DynamicQuantizeResult {
  Graph graph;
  std::vector<std::string> quantized;                         // "scope (weight name)"
  std::vector<std::pair<std::string, std::string>> kept_float;  // where, reason
  std::string str() const;
};

// reduce_range: activations in [0, 127] (for CPUs without VNNI, see
// quant::default_reduce_range); recorded on each node.
DynamicQuantizeResult quantize_dynamic(const Graph& g, bool reduce_range);
DynamicQuantizeResult quantize_dynamic(const Graph& g);

// The kinds of the nodes quantize_dynamic writes: linear_dynamic_int8 for
// products, rnn_layer_dynamic_int8 for recurrent layers (both projections
// int8, quant::rnn_layer_dynamic_int8; format version 3).
inline constexpr const char* kLinearDynamicInt8 = "linear_dynamic_int8";
inline constexpr const char* kRnnLayerDynamicInt8 = "rnn_layer_dynamic_int8";

}  // namespace ember::jit

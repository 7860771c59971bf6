// Variable-length sequence inputs (Note [sequence padding] in padding.cpp):
// which inputs are padded sequences, the check of a request's lengths, and
// padding along dim 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/jit/graph.h"

namespace ember::serve {

struct SequenceLayout {
  int lengths_input = -1;             // index of the integer input "lengths" [batch]; -1: none
  std::vector<bool> padded_inputs;    // dim 1 is the sequence dim
  std::vector<bool> padded_outputs;   // dim 1 follows the sequence symbol (cut back per request)
  std::string symbol;                 // the sequence dim's symbol; empty when it is fixed
  bool active() const { return lengths_input >= 0; }
};

SequenceLayout sequence_layout(const std::vector<std::string>& input_names,
                               const std::vector<jit::TensorType>& input_types,
                               const std::vector<jit::TensorType>& output_types);

// t with dim 1 grown to `length` by zeros (token id 0, or 0.0) after its own steps.
Tensor pad_dim1(const Tensor& t, int64_t length);

}  // namespace ember::serve

// Note [sequence padding]: a model with an integer input named "lengths" of
// shape [batch] (what `ember export` names the zoo text models' second input)
// reads each sequence only up to its length, so the steps after it may hold
// anything. Dim 1 of every other input of rank >= 2 is then its sequence dim
// (batch first, as the zoo models and the export take them):
//  - a fixed dim 1 (T: the length the model was traced at) accepts requests
//    of 1..T steps, padded to T with zeros when parsed;
//  - a symbolic dim 1 (a jit::while_loop model traced with a dynamic "seq")
//    lets requests of different lengths share a batch: the batcher pads each
//    to the longest of the batch, and cuts every output whose dim 1 follows
//    the same symbol back to the request's own length.
// The parser checks every length against the request's own steps (1..L), so
// no sequence reads another request's padding, and a request's outputs are
// those of running it alone (tests/serve check 1e-6 and the argmax).
#include "padding.h"

#include <algorithm>

#include "ember/ember.h"

namespace ember::serve {

SequenceLayout sequence_layout(const std::vector<std::string>& input_names,
                               const std::vector<jit::TensorType>& input_types,
                               const std::vector<jit::TensorType>& output_types) {
  SequenceLayout s;
  for (size_t i = 0; i < input_names.size(); ++i) {
    const jit::TensorType& t = input_types[i];
    if (input_names[i] == "lengths" && t.shape.size() == 1 && t.shape[0].is_symbolic() &&
        is_integral(t.dtype, /*include_bool=*/false))
      s.lengths_input = static_cast<int>(i);
  }
  s.padded_inputs.assign(input_types.size(), false);
  s.padded_outputs.assign(output_types.size(), false);
  if (!s.active()) return s;
  bool first = true, any = false;
  for (size_t i = 0; i < input_types.size(); ++i) {
    const jit::TensorType& t = input_types[i];
    if (static_cast<int>(i) == s.lengths_input || t.shape.size() < 2) continue;
    // Every sequence input must share the symbol, or all be fixed; else none is padded.
    std::string symbol = t.shape[1].symbol;
    if (!first && symbol != s.symbol) {
      s.padded_inputs.assign(input_types.size(), false);
      s.lengths_input = -1;
      s.symbol.clear();
      return s;
    }
    s.symbol = symbol, first = false, any = true;
    s.padded_inputs[i] = true;
  }
  if (!any) {
    s.lengths_input = -1;
    return s;
  }
  if (!s.symbol.empty())
    for (size_t o = 0; o < output_types.size(); ++o)
      s.padded_outputs[o] = output_types[o].shape.size() >= 2 && output_types[o].shape[1].symbol == s.symbol;
  return s;
}

Tensor pad_dim1(const Tensor& t, int64_t length) {
  const int64_t have = t.size(1);
  EMBER_ASSERT(have <= length, "pad_dim1: {} steps do not fit in {}", have, length);
  if (have == length) return t;
  std::vector<int64_t> shape = t.sizes().vec();
  shape[1] = length - have;
  return cat({t, zeros(shape, TensorOptions().dtype(t.dtype()))}, 1);
}

}  // namespace ember::serve

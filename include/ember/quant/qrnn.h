// Dynamic int8 recurrent layers (torch.ao.nn.quantized.dynamic.LSTM/GRU's
// arithmetic): the input and hidden projections of ember::rnn_layer through
// quant::linear_dynamic (weights int8 per output channel, activations
// quantized per call), the gates in float.
#pragma once

#include "ember/ops/rnn.h"
#include "ember/quant/qlinear.h"

namespace ember::quant {

// As ember::rnn_layer, with w_ih / w_hh (and their biases) packed: ih is
// [gates * hidden, in], hh [gates * hidden, hidden].
RnnLayerResult rnn_layer_dynamic_int8(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0,
                                      const Tensor& c0, const PackedLinear& ih, const PackedLinear& hh, bool reverse);

}  // namespace ember::quant

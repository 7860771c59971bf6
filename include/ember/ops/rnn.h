// One direction of one recurrent layer: the time loop behind nn::RNN, LSTM
// and GRU, as a single op (like aten::lstm). Traced, it is one "rnn_layer"
// node, so a graph keeps the sequence length symbolic and an exporter sees
// the layer whole (ONNX LSTM/GRU/RNN); the jit interpreter calls this same
// function, so a replay is bitwise the eager forward.
#pragma once

#include <cstdint>
#include <functional>

#include "ember/core/tensor.h"

namespace ember {

enum class RnnCell : int64_t { rnn_tanh = 0, rnn_relu = 1, lstm = 2, gru = 3 };

struct RnnLayerResult {
  Tensor output;  // [seq, batch, hidden]
  Tensor h;       // [batch, hidden], the state after each sequence's last step
  Tensor c;       // [batch, hidden] for LSTM; undefined otherwise
};

// x [seq, batch, in]; lengths undefined (every sequence runs all steps) or
// int64 [batch] in [1, seq] (a finished sequence keeps its state and outputs
// zeros); h0 [batch, hidden]; c0 [batch, hidden] for LSTM, else undefined;
// w_ih [gates * hidden, in], w_hh [gates * hidden, hidden], biases
// [gates * hidden] or undefined; gates: 1 (RNN), 4 (LSTM: i, f, g, o),
// 3 (GRU: r, z, n). reverse runs the steps from last to first.
RnnLayerResult rnn_layer(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                         const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                         bool reverse);

// The two products of the time loop, biases included: `input` maps every
// step's input at once ([seq * batch, in]) and `hidden` one step's state
// ([batch, hidden]) to [rows, gates * hidden].
struct RnnProducts {
  std::function<Tensor(const Tensor&)> input, hidden;
};
// rnn_layer's loop with the products supplied (the int8 layers of
// quant::rnn_layer_dynamic_int8); not recorded by tracing.
RnnLayerResult rnn_layer_with(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0,
                              const Tensor& c0, int64_t hidden_size, const RnnProducts& products, bool reverse);
// The checks rnn_layer_with makes of its cell, input, state and lengths
// (their values too), for layers that run their own loop.
void check_rnn_layer_state(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                           int64_t hidden_size);

}  // namespace ember

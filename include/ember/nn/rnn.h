// Recurrent layers: RNN (tanh / relu), LSTM and GRU with PyTorch's
// parameters, initialisation, shapes and packed-sequence semantics.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/generator.h"
#include "ember/nn/module.h"

namespace ember::nn {

// Constructor options after (input_size, hidden_size), with PyTorch's
// defaults; designated initialisers read like Python keywords:
//     nn::LSTM lstm(64, 128, {.num_layers = 2, .batch_first = true});
struct RNNOptions {
  int64_t num_layers = 1;
  // RNN only: "tanh" or "relu".
  std::string nonlinearity = "tanh";
  bool bias = true;
  // Input and output are (batch, seq, feature) instead of (seq, batch, feature);
  // states keep (num_layers * directions, batch, hidden) either way.
  bool batch_first = false;
  // Dropout on the outputs of every layer but the last, in training mode.
  double dropout = 0;
  bool bidirectional = false;
  ScalarType dtype = kFloat32;
  // Where dropout masks are drawn from (the default generator when null).
  Generator* generator = nullptr;
};

// Note [rnn forward]
// The layers share one time loop (RNNBase::run calls ember::rnn_layer, one
// traced node per layer and direction: ember/ops/rnn.h). Per layer and direction the
// input projection of the whole sequence is one GEMM (x @ W_ih^T + b_ih for
// all steps at once); each step then adds one GEMM for h @ W_hh^T + b_hh
// and the cell's elementwise gates. Everything is composed of differentiable
// ops, so autograd needs nothing RNN-specific.
//
// Variable lengths (forward(input, lengths, ...)) follow
// pack_padded_sequence(enforce_sorted=False) + pad_packed_sequence with
// total_length = seq: a step t >= length[b] leaves sequence b's state
// unchanged and writes zeros to its output. Because an inactive step keeps
// the state, the reverse direction — which walks t = seq-1 .. 0 — starts
// each sequence from h0 at its own last valid step, and the final state of
// either direction is the one at the sequence's own length. Masking is only
// done at steps where some sequence is inactive; while tracing (the lengths
// unknown to the host) every step is masked, with the same values.
//
// The forward overloads hide Module::forward(const Tensor&): an RNN returns
// (output, state), not one tensor, so it cannot sit in a Sequential.
class RNNBase : public Module {
 public:
  enum class Mode { RNN_TANH, RNN_RELU, LSTM, GRU };

  std::string extra_repr() const override;
  // Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch.
  void reset_parameters();

  // Parameters of a layer and direction (weight_ih_l{layer}[_reverse], ...);
  // the biases are undefined when bias = false.
  Tensor& weight_ih(int64_t layer, bool reverse = false) { return *cell(layer, reverse).w_ih; }
  Tensor& weight_hh(int64_t layer, bool reverse = false) { return *cell(layer, reverse).w_hh; }
  Tensor bias_ih(int64_t layer, bool reverse = false);
  Tensor bias_hh(int64_t layer, bool reverse = false);

  // Dynamic int8, in place (quant::quantize_dynamic with "LSTM" or "GRU"):
  // packs the current weights of every layer and direction (int8 per output
  // channel, biases kept); forward then runs quant::rnn_layer_dynamic_int8
  // without gradients. A snapshot, as PyTorch's: later changes to the float
  // weights are not seen. Not traceable: trace the float model and quantize
  // the graph (jit::quantize_dynamic) instead.
  void quantize_dynamic_int8();
  bool is_dynamic_int8() const { return !int8_.empty(); }

  const Mode mode;
  const int64_t input_size, hidden_size, num_layers;
  const bool bias, batch_first;
  const double dropout;
  const bool bidirectional;
  Generator* generator;

 protected:
  RNNBase(std::string type_name, Mode mode, int64_t input_size, int64_t hidden_size, const RNNOptions& opts);

  // The shared time loop (see Note [rnn forward]). input is 2-D (unbatched)
  // or 3-D; lengths undefined for the dense path; h0 / c0 may be undefined
  // (zeros). Returns (output, h_n, c_n) with c_n undefined unless LSTM.
  struct Result {
    Tensor output, h_n, c_n;
  };
  Result run(const Tensor& input, const Tensor& lengths, const Tensor& h0, const Tensor& c0);

 private:
  // Non-owning views of registry slots (Note [module design]: slots stay
  // put); the biases are null when bias = false.
  struct Cell {
    Tensor* w_ih = nullptr;
    Tensor* w_hh = nullptr;
    Tensor* b_ih = nullptr;
    Tensor* b_hh = nullptr;
  };
  Cell& cell(int64_t layer, bool reverse);
  int64_t num_gates() const;
  std::vector<Cell> cells_;  // layer-major, then direction
  struct Int8Cell;
  std::vector<std::shared_ptr<const Int8Cell>> int8_;  // as cells_, once quantized
};

// The recurrent modules' forward takes a state and returns (output, state),
// so it hides Module::forward(Tensor) on purpose: `using Module::forward`
// would make rnn.forward(x) ambiguous with the defaulted state. clang's
// -Woverloaded-virtual (in its -Wall) flags the hiding; GCC's -Wall does not.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Woverloaded-virtual"
#endif

// h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu), torch.nn.RNN.
class RNN : public RNNBase {
 public:
  RNN(int64_t input_size, int64_t hidden_size, const RNNOptions& opts = {});
  // input (seq, batch, input_size) (batch first if batch_first) or
  // (seq, input_size); h0 (num_layers * directions, batch, hidden), zeros
  // when undefined. Returns (output (seq, batch, directions * hidden), h_n).
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0 = Tensor());
  // A padded batch with int64 lengths [batch] (see Note [rnn forward]).
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& lengths, const Tensor& h0);
  std::pair<Tensor, Tensor> operator()(const Tensor& input, const Tensor& h0 = Tensor()) {
    return forward(input, h0);
  }
};

// torch.nn.LSTM, gates i, f, g, o stacked in that order in W_ih / W_hh:
// c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c').
class LSTM : public RNNBase {
 public:
  using State = std::pair<Tensor, Tensor>;  // (h, c)
  LSTM(int64_t input_size, int64_t hidden_size, const RNNOptions& opts = {});
  // Returns (output, (h_n, c_n)); an undefined h0 or c0 is zeros.
  std::pair<Tensor, State> forward(const Tensor& input, const State& hx = {});
  std::pair<Tensor, State> forward(const Tensor& input, const Tensor& lengths, const State& hx);
  std::pair<Tensor, State> operator()(const Tensor& input, const State& hx = {}) { return forward(input, hx); }
};

// torch.nn.GRU, gates r, z, n: r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),
// z likewise, n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
// h' = (1 - z) * n + z * h.
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, const RNNOptions& opts = {});
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0 = Tensor());
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& lengths, const Tensor& h0);
  std::pair<Tensor, Tensor> operator()(const Tensor& input, const Tensor& h0 = Tensor()) {
    return forward(input, h0);
  }
};

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

}  // namespace ember::nn

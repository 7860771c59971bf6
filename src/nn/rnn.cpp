// RNN, LSTM and GRU: parameters, argument checks and the shared time loop.
#include "ember/nn/rnn.h"

#include <algorithm>
#include <cmath>

#include "ember/core/grad_graph.h"
#include "ember/core/trace_hook.h"
#include "ember/nn/init.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/rnn.h"
#include "ember/quant/qrnn.h"

namespace ember::nn {

namespace {

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

RnnCell rnn_cell(RNNBase::Mode m) {
  switch (m) {
    case RNNBase::Mode::RNN_TANH: return RnnCell::rnn_tanh;
    case RNNBase::Mode::RNN_RELU: return RnnCell::rnn_relu;
    case RNNBase::Mode::LSTM: return RnnCell::lstm;
    case RNNBase::Mode::GRU: return RnnCell::gru;
  }
  return RnnCell::rnn_tanh;
}

RNNBase::Mode rnn_mode(const std::string& nonlinearity) {
  EMBER_CHECK(nonlinearity == "tanh" || nonlinearity == "relu",
              "RNN: expected nonlinearity 'tanh' or 'relu', got '{}'", nonlinearity);
  return nonlinearity == "tanh" ? RNNBase::Mode::RNN_TANH : RNNBase::Mode::RNN_RELU;
}

// LSTM and GRU have fixed nonlinearities; a non-default value is a mistake.
const RNNOptions& no_nonlinearity(const char* name, const RNNOptions& opts) {
  EMBER_CHECK(opts.nonlinearity == "tanh", "{}: nonlinearity applies to RNN only, got '{}'", name,
              opts.nonlinearity);
  return opts;
}

}  // namespace

RNNBase::RNNBase(std::string type_name, Mode m, int64_t in, int64_t hidden, const RNNOptions& opts)
    : Module(std::move(type_name)),
      mode(m),
      input_size(in),
      hidden_size(hidden),
      num_layers(opts.num_layers),
      bias(opts.bias),
      batch_first(opts.batch_first),
      dropout(opts.dropout),
      bidirectional(opts.bidirectional),
      generator(opts.generator) {
  const std::string& name = this->type_name();
  EMBER_CHECK(in >= 0, "{}: expected input_size >= 0, got {}", name, in);
  EMBER_CHECK(hidden > 0, "{}: expected hidden_size > 0, got {}", name, hidden);
  EMBER_CHECK(num_layers >= 1, "{}: expected num_layers >= 1, got {}", name, num_layers);
  EMBER_CHECK(dropout >= 0 && dropout <= 1, "{}: expected dropout in [0, 1], got {}", name, dropout);
  const int64_t gates = num_gates() * hidden, dirs = bidirectional ? 2 : 1;
  // PyTorch's registration order: per layer, per direction, w_ih, w_hh, b_ih, b_hh.
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      std::string suffix = fmt::format("_l{}{}", l, d == 1 ? "_reverse" : "");
      int64_t layer_in = l == 0 ? in : hidden * dirs;
      Cell c;
      c.w_ih = &register_parameter("weight_ih" + suffix, empty({gates, layer_in}, opts.dtype));
      c.w_hh = &register_parameter("weight_hh" + suffix, empty({gates, hidden}, opts.dtype));
      if (bias) {
        c.b_ih = &register_parameter("bias_ih" + suffix, empty({gates}, opts.dtype));
        c.b_hh = &register_parameter("bias_hh" + suffix, empty({gates}, opts.dtype));
      }
      cells_.push_back(c);
    }
  }
  reset_parameters();
}

int64_t RNNBase::num_gates() const {
  switch (mode) {
    case Mode::LSTM: return 4;
    case Mode::GRU: return 3;
    default: return 1;
  }
}

RNNBase::Cell& RNNBase::cell(int64_t layer, bool reverse) {
  EMBER_CHECK_INDEX(layer >= 0 && layer < num_layers && (!reverse || bidirectional),
                    "{}: no {}layer {} (num_layers={}, bidirectional={})", type_name(), reverse ? "reverse " : "",
                    layer, num_layers, py_bool(bidirectional));
  return cells_[layer * (bidirectional ? 2 : 1) + (reverse ? 1 : 0)];
}

Tensor RNNBase::bias_ih(int64_t layer, bool reverse) {
  const Cell& c = cell(layer, reverse);
  return c.b_ih ? *c.b_ih : Tensor();
}

Tensor RNNBase::bias_hh(int64_t layer, bool reverse) {
  const Cell& c = cell(layer, reverse);
  return c.b_hh ? *c.b_hh : Tensor();
}

void RNNBase::reset_parameters() {
  double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters()) init::uniform_(p, -bound, bound);
}

std::string RNNBase::extra_repr() const {
  std::string s = fmt::format("{}, {}", input_size, hidden_size);
  if (num_layers != 1) s += fmt::format(", num_layers={}", num_layers);
  if (!bias) s += ", bias=False";
  if (batch_first) s += ", batch_first=True";
  if (dropout != 0) s += ", dropout=" + py_float(dropout);
  if (bidirectional) s += ", bidirectional=True";
  if (!int8_.empty()) s += ", dtype=qint8";
  return s;
}

struct RNNBase::Int8Cell {
  quant::PackedLinear ih, hh;
};

void RNNBase::quantize_dynamic_int8() {
  std::vector<std::shared_ptr<const Int8Cell>> cells;
  for (const Cell& c : cells_)
    cells.push_back(std::make_shared<const Int8Cell>(
        Int8Cell{quant::PackedLinear::pack(*c.w_ih, c.b_ih ? *c.b_ih : Tensor()),
                 quant::PackedLinear::pack(*c.w_hh, c.b_hh ? *c.b_hh : Tensor())}));
  int8_ = std::move(cells);
}

RNNBase::Result RNNBase::run(const Tensor& input, const Tensor& lengths, const Tensor& h0_in, const Tensor& c0_in) {
  const std::string& name = type_name();
  EMBER_CHECK(int8_.empty() || !trace_hook(),
              "{}: a dynamic int8 {} cannot be traced (its int8 loop is not recorded); trace the float model and "
              "quantize the graph (jit::quantize_dynamic, ember export --quantize dynamic)",
              name, name);
  const char* layout = batch_first ? "batch, seq, feature" : "seq, batch, feature";
  EMBER_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 2),
              "{}: input must have 3 dimensions ({}) or 2 (seq, feature) when unbatched, got {}", name, layout,
              input.defined() ? shape_str(input) : "an undefined tensor");
  const bool batched = input.dim() == 3;
  Tensor x = !batched ? input.unsqueeze(1) : batch_first ? input.transpose(0, 1) : input;
  const int64_t steps = x.size(0), batch = x.size(1), dirs = bidirectional ? 2 : 1;
  EMBER_CHECK(x.size(2) == input_size, "{}: expected input with {} features (input_size), got {}", name, input_size,
              shape_str(input));
  EMBER_CHECK(steps > 0, "{}: expected a sequence length > 0, got input {}", name, shape_str(input));

  std::vector<int64_t> state_shape{num_layers * dirs, batch, hidden_size};
  if (!batched) state_shape.erase(state_shape.begin() + 1);
  auto prepare_state = [&](const Tensor& s, const char* what) {
    if (!s.defined()) return zeros({num_layers * dirs, batch, hidden_size}, x.dtype());
    EMBER_CHECK(s.sizes().vec() == state_shape,
                "{}: expected {} of shape [{}] (num_layers * directions, {}hidden_size), got {}{}", name, what,
                fmt::join(state_shape, ", "), batched ? "batch, " : "", shape_str(s),
                s.dtype() == kInt64 ? "; to pass lengths, call forward(input, lengths, state)" : "");
    return batched ? s : s.unsqueeze(1);
  };
  Tensor h0 = prepare_state(h0_in, "h0");
  Tensor c0 = mode == Mode::LSTM ? prepare_state(c0_in, "c0") : Tensor();

  if (lengths.defined()) {
    EMBER_CHECK(batched, "{}: lengths need a batched (3-D) input, got {}", name, shape_str(input));
    EMBER_CHECK(lengths.dtype() == kInt64 && lengths.dim() == 1 && lengths.size(0) == batch,
                "{}: expected int64 lengths of shape [{}] (one per sequence), got {} of dtype {}", name, batch,
                shape_str(lengths), to_string(lengths.dtype()));
    // While tracing, the lengths are a graph input the graph must not read
    // here (Note [rnn_layer]); rnn_layer checks them when it runs.
    if (!trace_hook()) {
      std::vector<int64_t> lens = lengths.to_vector<int64_t>();
      for (size_t b = 0; b < lens.size(); ++b)
        EMBER_CHECK(lens[b] >= 1 && lens[b] <= steps,
                    "{}: expected lengths in [1, {}] (the padded length), got {} at {}", name, steps, lens[b], b);
    }
  }

  Tensor layer_in = x;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < num_layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t i = l * dirs + d;
      const Cell& c = cells_[i];
      RnnLayerResult r =
          int8_.empty()
              ? rnn_layer(rnn_cell(mode), layer_in, lengths, h0.select(0, i), c0.defined() ? c0.select(0, i) : Tensor(),
                          *c.w_ih, *c.w_hh, c.b_ih ? *c.b_ih : Tensor(), c.b_hh ? *c.b_hh : Tensor(), d == 1)
              : quant::rnn_layer_dynamic_int8(rnn_cell(mode), layer_in, lengths, h0.select(0, i),
                                              c0.defined() ? c0.select(0, i) : Tensor(), int8_[i]->ih, int8_[i]->hh,
                                              d == 1);
      outs.push_back(r.output);
      h_n.push_back(r.h);
      if (mode == Mode::LSTM) c_n.push_back(r.c);
    }
    layer_in = dirs == 2 ? cat(outs, 2) : outs[0];
    if (l + 1 < num_layers && dropout > 0 && is_training())
      layer_in = ember::dropout(layer_in, dropout, true, generator);
  }

  Result r{layer_in, stack(h_n, 0), mode == Mode::LSTM ? stack(c_n, 0) : Tensor()};
  if (!batched) {
    r.output = r.output.squeeze(1);
    r.h_n = r.h_n.squeeze(1);
    if (r.c_n.defined()) r.c_n = r.c_n.squeeze(1);
  } else if (batch_first) {
    r.output = r.output.transpose(0, 1);
  }
  return r;
}

// ---- the three layers ----

RNN::RNN(int64_t input_size, int64_t hidden_size, const RNNOptions& opts)
    : RNNBase("RNN", rnn_mode(opts.nonlinearity), input_size, hidden_size, opts) {}

std::pair<Tensor, Tensor> RNN::forward(const Tensor& input, const Tensor& h0) {
  Result r = run(input, Tensor(), h0, Tensor());
  return {r.output, r.h_n};
}

std::pair<Tensor, Tensor> RNN::forward(const Tensor& input, const Tensor& lengths, const Tensor& h0) {
  EMBER_CHECK(lengths.defined(), "RNN: lengths must be defined; call forward(input, h0) for equal lengths");
  Result r = run(input, lengths, h0, Tensor());
  return {r.output, r.h_n};
}

LSTM::LSTM(int64_t input_size, int64_t hidden_size, const RNNOptions& opts)
    : RNNBase("LSTM", Mode::LSTM, input_size, hidden_size, no_nonlinearity("LSTM", opts)) {}

std::pair<Tensor, LSTM::State> LSTM::forward(const Tensor& input, const State& hx) {
  Result r = run(input, Tensor(), hx.first, hx.second);
  return {r.output, {r.h_n, r.c_n}};
}

std::pair<Tensor, LSTM::State> LSTM::forward(const Tensor& input, const Tensor& lengths, const State& hx) {
  EMBER_CHECK(lengths.defined(), "LSTM: lengths must be defined; call forward(input, (h0, c0)) for equal lengths");
  Result r = run(input, lengths, hx.first, hx.second);
  return {r.output, {r.h_n, r.c_n}};
}

GRU::GRU(int64_t input_size, int64_t hidden_size, const RNNOptions& opts)
    : RNNBase("GRU", Mode::GRU, input_size, hidden_size, no_nonlinearity("GRU", opts)) {}

std::pair<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& h0) {
  Result r = run(input, Tensor(), h0, Tensor());
  return {r.output, r.h_n};
}

std::pair<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& lengths, const Tensor& h0) {
  EMBER_CHECK(lengths.defined(), "GRU: lengths must be defined; call forward(input, h0) for equal lengths");
  Result r = run(input, lengths, h0, Tensor());
  return {r.output, r.h_n};
}

}  // namespace ember::nn

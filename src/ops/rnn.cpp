// The recurrent time loop as one op (see ember/ops/rnn.h). Note [rnn_layer]:
// the loop runs ordinary differentiable ops, so training gets its gradients
// from autograd as before; only tracing sees the layer as one node. While
// tracing, the lengths are a graph input whose values the graph must not
// depend on, so every step is masked (a mask that holds selects the new state
// bitwise, so the values equal the eager shortcut's), and the range check
// moves to run time, where the interpreter calls this function with real
// lengths.
#include "ember/ops/rnn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "ember/core/trace_hook.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "kernels/cpu/vec_f32.h"

namespace ember {

namespace {

std::string shape_str(const Tensor& t) {
  return t.defined() ? fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")) : "undefined";
}

int64_t gate_count(RnnCell cell) {
  switch (cell) {
    case RnnCell::lstm: return 4;
    case RnnCell::gru: return 3;
    default: return 1;
  }
}

std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

void check_operand(const Tensor& t, std::vector<int64_t> want, const char* name, ScalarType dtype) {
  EMBER_CHECK(t.defined() && t.sizes().vec() == want && t.dtype() == dtype,
              "rnn_layer: expected {} of shape [{}] and dtype {}, got {}{}", name, fmt::join(want, ", "),
              to_string(dtype), shape_str(t), t.defined() ? fmt::format(" of dtype {}", to_string(t.dtype())) : "");
}

// The cell, the input and the state (hidden units given).
void check_state(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                 int64_t hidden) {
  EMBER_CHECK(static_cast<int64_t>(cell) >= 0 && static_cast<int64_t>(cell) <= 3, "rnn_layer: unknown cell {}",
              static_cast<int64_t>(cell));
  EMBER_CHECK(x.defined() && x.dim() == 3 && x.size(0) > 0,
              "rnn_layer: expected an input of shape [seq, batch, features] with seq > 0, got {}", shape_str(x));
  const ScalarType dt = x.dtype();
  const int64_t batch = x.size(1);
  check_operand(h0, {batch, hidden}, "h0", dt);
  if (cell == RnnCell::lstm) check_operand(c0, {batch, hidden}, "c0", dt);
  else EMBER_CHECK(!c0.defined(), "rnn_layer: c0 is for LSTM only");
  if (lengths.defined()) check_operand(lengths, {batch}, "lengths", kInt64);
}

void check_operands(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_CHECK(w_hh.defined() && w_hh.dim() == 2, "rnn_layer: expected w_hh of shape [gates * hidden, hidden], got {}",
              shape_str(w_hh));
  const int64_t hidden = w_hh.size(1);
  check_state(cell, x, lengths, h0, c0, hidden);
  const ScalarType dt = x.dtype();
  const int64_t gates = gate_count(cell) * hidden;
  check_operand(w_hh, {gates, hidden}, "w_hh", dt);
  check_operand(w_ih, {gates, x.size(2)}, "w_ih", dt);
  if (b_ih.defined() || b_hh.defined()) {
    check_operand(b_ih, {gates}, "b_ih", dt);
    check_operand(b_hh, {gates}, "b_hh", dt);
  }
}

// The first step some sequence no longer covers (every step while tracing).
int64_t first_masked_step(const Tensor& lengths, int64_t steps, bool tracing) {
  if (!lengths.defined()) return steps;
  if (tracing) return 0;
  const std::vector<int64_t> lens = lengths.to_vector<int64_t>();
  for (size_t b = 0; b < lens.size(); ++b)
    EMBER_CHECK(lens[b] >= 1 && lens[b] <= steps, "rnn_layer: expected lengths in [1, {}] (the padded length), got {} at {}",
                steps, lens[b], b);
  return *std::min_element(lens.begin(), lens.end());
}

// Inference's LSTM step (nothing needs a gradient): the gates in one pass
// (vec::lstm_cell_f32) with the separate ops' numbers, instead of ten ops
// that each allocate and sweep [batch, 4 * hidden]. False where it does not
// apply (training, other dtypes and devices); the ops below run then.
bool fused_lstm_step(const Tensor& gx, const Tensor& gh, const Tensor& c, Tensor& h_new, Tensor& c_new) {
  for (const Tensor* t : {&gx, &gh, &c})
    if (t->requires_grad() || t->dtype() != kFloat32 || !t->device().is_cpu() || !t->is_contiguous()) return false;
  const int64_t batch = c.size(0), hidden = c.size(1);
  if (!gx.sizes().equals(gh.sizes()) || gx.dim() != 2 || gx.size(0) != batch || gx.size(1) != 4 * hidden) return false;
  h_new = empty({batch, hidden}, TensorOptions(kFloat32));
  c_new = empty({batch, hidden}, TensorOptions(kFloat32));
  vec::lstm_cell_f32(gx.data_ptr<float>(), gh.data_ptr<float>(), c.data_ptr<float>(), h_new.data_ptr<float>(),
                     c_new.data_ptr<float>(), batch, hidden);
  return true;
}

RnnLayerResult run_loop(RnnCell cell, const Tensor& x, const Tensor& lengths, Tensor h, Tensor cstate,
                        const RnnProducts& products, bool reverse, int64_t first_masked) {
  const int64_t steps = x.size(0), batch = x.size(1), gates = gate_count(cell) * h.size(1);
  // The input projection of every step in one GEMM: [seq * batch, in] @ W_ih^T;
  // unbind's single backward node stacks the steps' gradients.
  Tensor xw = products.input(x.reshape({steps * batch, x.size(2)}));
  EMBER_CHECK(xw.dim() == 2 && xw.size(0) == steps * batch && xw.size(1) == gates,
              "rnn_layer: the input projection gave {}, expected [{}, {}]", shape_str(xw), steps * batch, gates);
  xw = xw.view({steps, batch, gates});
  std::vector<Tensor> xs = unbind(xw, 0);
  std::vector<Tensor> masks;  // masks[t - first_masked]: [batch, 1], true while step t is in the sequence
  if (first_masked < steps) {
    Tensor lens_col = lengths.unsqueeze(1);
    for (int64_t t = first_masked; t < steps; ++t) masks.push_back(gt(lens_col, t));
  }
  std::vector<Tensor> outs(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    Tensor hw = products.hidden(h);
    Tensor h_new, c_new;
    switch (cell) {
      case RnnCell::rnn_tanh: h_new = tanh(xs[t] + hw); break;
      case RnnCell::rnn_relu: h_new = relu(xs[t] + hw); break;
      case RnnCell::lstm: {
        if (fused_lstm_step(xs[t], hw, cstate, h_new, c_new)) break;
        std::vector<Tensor> g = chunk(xs[t] + hw, 4, 1);  // i, f, g, o
        c_new = sigmoid(g[1]) * cstate + sigmoid(g[0]) * tanh(g[2]);
        h_new = sigmoid(g[3]) * tanh(c_new);
        break;
      }
      case RnnCell::gru: {
        // r and z add the two projections; n keeps W_hn h + b_hn apart so r
        // can gate it (PyTorch's formula, not the original paper's).
        std::vector<Tensor> gx = chunk(xs[t], 3, 1), gh = chunk(hw, 3, 1);  // r, z, n
        Tensor r = sigmoid(gx[0] + gh[0]);
        Tensor z = sigmoid(gx[1] + gh[1]);
        Tensor n = tanh(gx[2] + r * gh[2]);
        h_new = n + z * (h - n);  // (1 - z) * n + z * h
        break;
      }
    }
    if (t >= first_masked) {
      // Some sequences have ended: they keep their state and output zeros.
      const Tensor& m = masks[static_cast<size_t>(t - first_masked)];
      outs[t] = where(m, h_new, 0.0);
      h = where(m, h_new, h);
      if (cell == RnnCell::lstm) cstate = where(m, c_new, cstate);
    } else {
      outs[t] = h_new;
      h = h_new;
      cstate = c_new;
    }
  }
  return {stack(outs, 0), h, cell == RnnCell::lstm ? cstate : Tensor()};
}

}  // namespace

RnnLayerResult rnn_layer(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                         const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                         bool reverse) {
  check_operands(cell, x, lengths, h0, c0, w_ih, w_hh, b_ih, b_hh);
  TraceHook* hook = trace_hook();
  RnnLayerResult r;
  {
    TraceHookPause inner;  // the node below describes these ops
    const int64_t first_masked = first_masked_step(lengths, x.size(0), hook != nullptr);
    const RnnProducts products{[&](const Tensor& a) { return linear(a, w_ih, maybe(b_ih)); },
                               [&](const Tensor& a) { return linear(a, w_hh, maybe(b_hh)); }};
    r = run_loop(cell, x, lengths, h0, c0, products, reverse, first_masked);
  }
  if (hook) [[unlikely]]
    hook->record_composite("rnn_layer", {&x, &lengths, &h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh}, {&r.output, &r.h, &r.c},
                           {{"cell", static_cast<int64_t>(cell)}, {"reverse", reverse}});
  return r;
}

RnnLayerResult rnn_layer_with(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0,
                              const Tensor& c0, int64_t hidden_size, const RnnProducts& products, bool reverse) {
  check_state(cell, x, lengths, h0, c0, hidden_size);
  TraceHookPause untraced;
  return run_loop(cell, x, lengths, h0, c0, products, reverse, first_masked_step(lengths, x.size(0), false));
}

void check_rnn_layer_state(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                           int64_t hidden_size) {
  check_state(cell, x, lengths, h0, c0, hidden_size);
  first_masked_step(lengths, x.size(0), false);
}

}  // namespace ember

// ONNX LSTM and GRU (layout 0: X [seq, batch, input]; layout 1: batch first),
// forward, reverse or bidirectional, with sequence_lens: a sequence's state
// stops at its length and its outputs past it are zero, as the ONNX spec and
// torch.onnx.export's packed sequences expect. Default activations only.
#include <fmt/format.h>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/view.h"
#include "runtime/onnx/onnx_ops.h"

namespace ember::runtime::onnx_import {

namespace {

struct RnnShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_first = false;
};

RnnShape check_rnn(OpCtx& c, int64_t gates) {
  RnnShape s;
  const Tensor& x = c.input(0);
  if (x.dim() != 3) c.fail("X must be 3-D");
  s.batch_first = c.i("layout", 0) != 0;
  s.seq = x.size(s.batch_first ? 1 : 0), s.batch = x.size(s.batch_first ? 0 : 1), s.input = x.size(2);
  s.hidden = c.i("hidden_size", 0);
  const std::string dir = c.s("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") c.fail(fmt::format("unknown direction {}", dir));
  s.dirs = dir == "bidirectional" ? 2 : 1;
  if (s.hidden <= 0) c.fail("hidden_size must be positive");
  if (c.attr("activations") || c.attr("clip") || c.i("input_forget", 0))
    c.fail("only the default activations, no clip and no input_forget are supported");
  auto expect = [&](size_t k, std::vector<int64_t> shape, const char* what) {
    if (!c.has(k)) return;
    if (c.in[k].sizes().vec() != shape || c.in[k].dtype() != x.dtype())
      c.fail(fmt::format("{} must be {}[{}], got {}[{}]", what, to_string(x.dtype()), fmt::join(shape, ", "),
                         to_string(c.in[k].dtype()), fmt::join(c.in[k].sizes().vec(), ", ")));
  };
  c.input(1), c.input(2);
  expect(1, {s.dirs, gates * s.hidden, s.input}, "W");
  expect(2, {s.dirs, gates * s.hidden, s.hidden}, "R");
  expect(3, {s.dirs, 2 * gates * s.hidden}, "B");
  if (c.has(4) && (c.in[4].dim() != 1 || c.in[4].size(0) != s.batch)) c.fail("sequence_lens must be [batch]");
  expect(5, {s.dirs, s.batch, s.hidden}, "initial_h");
  return s;
}

// Per batch row, whether step t is inside its sequence: [batch, 1] bool, or undefined (all are).
Tensor active(OpCtx& c, int64_t t) {
  if (!c.has(4)) return Tensor();
  return gt(c.in[4].to(kInt64), Scalar(t)).unsqueeze(1);
}

Tensor keep(const Tensor& mask, const Tensor& fresh, const Tensor& old) {
  return mask.defined() ? where(mask, fresh, old) : fresh;
}

struct Outputs {
  std::vector<Tensor> y;  // per dir: [seq, batch, hidden]
  std::vector<Tensor> h, cell;
};

std::vector<Tensor> finish(OpCtx& c, const RnnShape& s, Outputs& o, bool lstm) {
  std::vector<Tensor> out;
  Tensor y = stack(o.y, 1);  // [seq, dirs, batch, hidden]
  if (s.batch_first) y = y.permute({2, 0, 1, 3});
  out.push_back(y.contiguous());
  Tensor h = stack(o.h, 0), cell = lstm ? stack(o.cell, 0) : Tensor();
  if (s.batch_first) h = h.transpose(0, 1), cell = lstm ? cell.transpose(0, 1) : cell;
  out.push_back(h.contiguous());
  if (lstm) out.push_back(cell.contiguous());
  while (out.size() > c.outputs()) out.pop_back();
  return out;
}

Tensor x_major(const RnnShape& s, const Tensor& x) { return s.batch_first ? x.transpose(0, 1).contiguous() : x; }

Tensor initial(OpCtx& c, size_t k, const RnnShape& s, int64_t d, ScalarType dt) {
  if (!c.has(k)) return zeros({s.batch, s.hidden}, TensorOptions(dt));
  Tensor t = c.in[k];
  if (s.batch_first) t = t.transpose(0, 1);
  return t.select(0, d);
}

}  // namespace

std::vector<Tensor> op_lstm(OpCtx& c) {
  const RnnShape s = check_rnn(c, 4);
  if (c.has(7)) c.fail("peephole weights (P) are not supported");
  if (c.has(6) && c.in[6].sizes().vec() != std::vector<int64_t>{s.dirs, s.batch, s.hidden}) c.fail("initial_c has the wrong shape");
  const Tensor x = x_major(s, c.input(0));
  const ScalarType dt = x.dtype();
  const bool reverse_only = c.s("direction", "forward") == "reverse";
  Outputs o;
  for (int64_t d = 0; d < s.dirs; ++d) {
    const Tensor w = c.in[1].select(0, d), r = c.in[2].select(0, d);
    Tensor bias = c.has(3) ? add(c.in[3].select(0, d).narrow(0, 0, 4 * s.hidden), c.in[3].select(0, d).narrow(0, 4 * s.hidden, 4 * s.hidden))
                           : zeros({4 * s.hidden}, TensorOptions(dt));
    // x @ W^T + b for every step at once: [seq, batch, 4H].
    const Tensor xw = add(matmul(x, w.transpose(0, 1)), bias);
    Tensor h = initial(c, 5, s, d, dt), cell = initial(c, 6, s, d, dt);
    std::vector<Tensor> ys(static_cast<size_t>(s.seq));
    const bool backward = reverse_only || d == 1;
    for (int64_t k = 0; k < s.seq; ++k) {
      const int64_t t = backward ? s.seq - 1 - k : k;
      const Tensor g = add(xw.select(0, t), matmul(h, r.transpose(0, 1)));
      const Tensor i = sigmoid(g.narrow(1, 0, s.hidden)), og = sigmoid(g.narrow(1, s.hidden, s.hidden));
      const Tensor f = sigmoid(g.narrow(1, 2 * s.hidden, s.hidden)), cc = tanh(g.narrow(1, 3 * s.hidden, s.hidden));
      const Tensor cell_new = add(mul(f, cell), mul(i, cc));
      const Tensor h_new = mul(og, tanh(cell_new));
      const Tensor m = active(c, t);
      cell = keep(m, cell_new, cell);
      h = keep(m, h_new, h);
      ys[static_cast<size_t>(t)] = m.defined() ? where(m, h_new, zeros_like(h_new)) : h_new;
    }
    o.y.push_back(stack(ys, 0));
    o.h.push_back(h);
    o.cell.push_back(cell);
  }
  return finish(c, s, o, true);
}

std::vector<Tensor> op_gru(OpCtx& c) {
  const RnnShape s = check_rnn(c, 3);
  const Tensor x = x_major(s, c.input(0));
  const ScalarType dt = x.dtype();
  const bool before_reset = c.i("linear_before_reset", 0) != 0;
  const bool reverse_only = c.s("direction", "forward") == "reverse";
  const int64_t H = s.hidden;
  Outputs o;
  for (int64_t d = 0; d < s.dirs; ++d) {
    const Tensor w = c.in[1].select(0, d), r = c.in[2].select(0, d);
    const Tensor wb = c.has(3) ? c.in[3].select(0, d).narrow(0, 0, 3 * H) : zeros({3 * H}, TensorOptions(dt));
    const Tensor rb = c.has(3) ? c.in[3].select(0, d).narrow(0, 3 * H, 3 * H) : zeros({3 * H}, TensorOptions(dt));
    const Tensor xw = add(matmul(x, w.transpose(0, 1)), wb);  // [seq, batch, 3H]: z, r, h
    const Tensor rz = r.narrow(0, 0, 2 * H), rh = r.narrow(0, 2 * H, H);
    Tensor h = initial(c, 5, s, d, dt);
    std::vector<Tensor> ys(static_cast<size_t>(s.seq));
    const bool backward = reverse_only || d == 1;
    for (int64_t k = 0; k < s.seq; ++k) {
      const int64_t t = backward ? s.seq - 1 - k : k;
      const Tensor xt = xw.select(0, t);
      const Tensor zr = sigmoid(add(add(xt.narrow(1, 0, 2 * H), matmul(h, rz.transpose(0, 1))), rb.narrow(0, 0, 2 * H)));
      const Tensor z = zr.narrow(1, 0, H), rg = zr.narrow(1, H, H);
      const Tensor hh = before_reset
                            ? add(mul(rg, add(matmul(h, rh.transpose(0, 1)), rb.narrow(0, 2 * H, H))), xt.narrow(1, 2 * H, H))
                            : add(add(matmul(mul(rg, h), rh.transpose(0, 1)), rb.narrow(0, 2 * H, H)), xt.narrow(1, 2 * H, H));
      const Tensor cand = tanh(hh);
      const Tensor h_new = add(mul(rsub(z, Scalar(1)), cand), mul(z, h));
      const Tensor m = active(c, t);
      h = keep(m, h_new, h);
      ys[static_cast<size_t>(t)] = m.defined() ? where(m, h_new, zeros_like(h_new)) : h_new;
    }
    o.y.push_back(stack(ys, 0));
    o.h.push_back(h);
  }
  return finish(c, s, o, false);
}

}  // namespace ember::runtime::onnx_import

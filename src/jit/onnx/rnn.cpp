// ONNX lowerings of the jit nodes that stand for a whole computation:
// rnn_layer (one direction of a recurrent layer, ember::rnn_layer) becomes
// ONNX's LSTM / GRU / RNN op, and arange a Range over its (possibly symbolic)
// length. Note [onnx rnn gates]: ONNX orders the gates i, o, f, c (LSTM) and
// z, r, h (GRU) where PyTorch and Ember use i, f, g, o and r, z, n, so the
// weight and bias rows are reordered into initializers; GRU's
// linear_before_reset=1 is PyTorch's formula (r gates W_hn h + b_hn). ONNX's
// sequence_lens has the semantics of Ember's lengths: outputs past a length
// are 0, the state is the last valid step's, and the reverse direction starts
// at each sequence's own end.
#include <fmt/format.h>

#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "jit/onnx/lower.h"

namespace ember::jit::onnx_export {

namespace {

const Constant* constant_of(const LowerCtx& c, size_t input) {
  if (input >= c.n.inputs.size() || c.n.inputs[input] == kNoValue) return nullptr;
  for (const Constant& k : c.g.constants)
    if (k.value == c.n.inputs[input]) return &k;
  return nullptr;
}

// The rows of w [gates * hidden, ...] in ONNX's gate order, with a leading
// num_directions = 1 dim.
Tensor onnx_gate_order(const Tensor& w, int64_t cell, int64_t hidden) {
  auto gate = [&](int64_t k) { return w.narrow(0, k * hidden, hidden); };
  Tensor r = cell == 2 ? cat({gate(0), gate(3), gate(1), gate(2)}, 0)  // i f g o -> i o f c
             : cell == 3 ? cat({gate(1), gate(0), gate(2)}, 0)         // r z n -> z r h
                         : w;
  return r.unsqueeze(0).contiguous();
}

std::string weight(LowerCtx& c, size_t input, const char* what, int64_t cell, int64_t hidden) {
  const Constant* k = constant_of(c, input);
  if (!k)
    c.fail(fmt::format("its {} is computed in the graph, not a parameter; ONNX's recurrent ops take weights as "
                       "initializers",
                       what));
  return c.b.initializer(c.b.fresh(k->name + ".onnx"), onnx_gate_order(k->data, cell, hidden));
}

std::string unsqueeze0(Builder& b, const std::string& x) { return b.op("Unsqueeze", {x, b.const_ints({0})}); }
std::string squeeze(Builder& b, const std::string& x, int64_t axis) { return b.op("Squeeze", {x, b.const_ints({axis})}); }

void lower_rnn_layer(LowerCtx& c) {
  Builder& b = c.b;
  const int64_t cell = c.n.attr_int("cell");
  if (cell < 0 || cell > 3) c.fail(fmt::format("unknown cell {}", cell));
  const TensorType& whh = c.g.type(c.n.inputs.at(5));
  const int64_t hidden = whh.shape.at(1).size;
  const std::string w = weight(c, 4, "w_ih", cell, hidden), r = weight(c, 5, "w_hh", cell, hidden);
  std::string bias;
  if (constant_of(c, 6) || constant_of(c, 7)) {
    const Constant* bi = constant_of(c, 6);
    const Constant* bh = constant_of(c, 7);
    if (!bi || !bh) c.fail("its biases must both be parameters (ONNX takes them as one initializer)");
    Tensor both = cat({onnx_gate_order(bi->data, cell, hidden), onnx_gate_order(bh->data, cell, hidden)}, 1);
    bias = b.initializer(b.fresh(bi->name + ".onnx"), both.contiguous());
  } else if (c.n.inputs.at(6) != kNoValue || c.n.inputs.at(7) != kNoValue) {
    c.fail("its biases are computed in the graph, not parameters");
  }
  std::string lens;
  if (c.n.inputs.at(1) != kNoValue) {
    onnx::NodeProto& cast = b.node("Cast", {c.in(1)});
    set_attr(cast, "to", int64_t{onnx::TensorProto::INT32});
    lens = cast.output(0);
  }
  const std::string h0 = unsqueeze0(b, c.in(2));
  const std::string c0 = cell == 2 ? unsqueeze0(b, c.in(3)) : "";
  const char* op = cell == 2 ? "LSTM" : cell == 3 ? "GRU" : "RNN";
  std::vector<std::string> inputs = {c.in(0), w, r, bias, lens, h0};
  if (cell == 2) inputs.push_back(c0);
  onnx::NodeProto& n = b.node(op, inputs, {}, cell == 2 ? 3 : 2);
  set_attr(n, "hidden_size", hidden);
  set_attr(n, "direction", std::string(c.n.attr_bool("reverse") ? "reverse" : "forward"));
  if (cell == 3) set_attr(n, "linear_before_reset", int64_t{1});
  if (cell == 1) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    a->add_strings("Relu");
  }
  const std::string y = n.output(0), y_h = n.output(1), y_c = cell == 2 ? n.output(2) : "";
  b.finish(squeeze(b, y, 1), c.out(0));  // [seq, 1, batch, hidden] -> [seq, batch, hidden]
  if (c.n.outputs.at(1) != kNoValue) b.finish(squeeze(b, y_h, 0), c.out(1));
  if (cell == 2 && c.n.outputs.at(2) != kNoValue) b.finish(squeeze(b, y_c, 0), c.out(2));
}

// start + i * step for i < n, n the output's length (a symbolic dim or fixed).
void lower_arange(LowerCtx& c) {
  Builder& b = c.b;
  const TensorType& t = c.g.type(c.n.outputs.at(0));
  const ScalarType dt = t.dtype;
  const Scalar start = c.n.attr_scalar("start"), step = c.n.attr_scalar("step");
  const std::string s = b.const_scalar(start.to_double(), dt), d = b.const_scalar(step.to_double(), dt);
  onnx::NodeProto& cast = b.node("Cast", {squeeze(b, b.dims(dim_exprs(t), -1, false), 0)});
  set_attr(cast, "to", int64_t{onnx_dtype(dt)});
  const std::string limit = b.op("Add", {s, b.op("Mul", {cast.output(0), d})});
  b.finish(b.op("Range", {s, limit, d}), c.out(0));
}

}  // namespace

void register_composite_lowerings(std::unordered_map<std::string, LowerFn>& m) {
  m.emplace("rnn_layer", lower_rnn_layer);
  m.emplace("arange", lower_arange);
}

}  // namespace ember::jit::onnx_export

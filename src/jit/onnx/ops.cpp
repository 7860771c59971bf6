// The ONNX lowering of each jit node kind (Note [onnx lowering]).
//
// Note [onnx lowering]: a node's inputs are exactly what its kernel read
// (already cast, already contiguous where the kernel needed it), so most
// kinds are one ONNX op. The kernels that carry their geometry as
// [outer, reduce, inner] (reductions, softmax) are lowered through a Reshape
// to that geometry, in the memory order of their input, which a view input
// may permute (LowerCtx::view_strides). Fused attributes from the passes
// (activation, pool) become the ops they fused.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "ember/ops/factory.h"
#include "jit/onnx/lower.h"

namespace ember::jit::onnx_export {

const std::string& LowerCtx::in(size_t i) const {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) fail(fmt::format("input {} is missing", i));
  return names.at(static_cast<size_t>(n.inputs[i]));
}

const std::string& LowerCtx::out(size_t i) const {
  if (i >= n.outputs.size() || n.outputs[i] == kNoValue) fail(fmt::format("output {} is missing", i));
  return names.at(static_cast<size_t>(n.outputs[i]));
}

void LowerCtx::fail(const std::string& what) const {
  EMBER_ERROR("export_onnx: node {} ({}{}): {}", index, n.kind, n.scope.empty() ? "" : ", in " + n.scope, what);
}

namespace {

bool has_input(const LowerCtx& c, size_t i) { return i < c.n.inputs.size() && c.n.inputs[i] != kNoValue; }
bool has_output(const LowerCtx& c, size_t i) { return i < c.n.outputs.size() && c.n.outputs[i] != kNoValue; }
ScalarType out_dtype(const LowerCtx& c) { return c.g.type(c.n.outputs.at(0)).dtype; }

// ---- elementwise ----

std::string activation(Builder& b, const std::string& kind, const std::string& x, ScalarType dtype) {
  if (kind == "relu") return b.op("Relu", {x});
  if (kind == "sigmoid") return b.op("Sigmoid", {x});
  if (kind == "tanh") return b.op("Tanh", {x});
  if (kind == "silu") return b.op("Mul", {x, b.op("Sigmoid", {x})});
  if (kind == "gelu") {
    // 0.5 x (1 + erf(x / sqrt 2)): ONNX has no Gelu before opset 20.
    std::string e = b.op("Erf", {b.op("Div", {x, b.const_scalar(std::numbers::sqrt2, dtype)})});
    std::string h = b.op("Mul", {x, b.op("Add", {e, b.const_scalar(1, dtype)})});
    return b.op("Mul", {h, b.const_scalar(0.5, dtype)});
  }
  if (kind == "gelu_tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    std::string x3 = b.op("Mul", {b.op("Mul", {x, x}), x});
    std::string in = b.op("Add", {x, b.op("Mul", {x3, b.const_scalar(0.044715, dtype)})});
    std::string t = b.op("Tanh", {b.op("Mul", {in, b.const_scalar(std::sqrt(2 / std::numbers::pi), dtype)})});
    std::string h = b.op("Mul", {x, b.op("Add", {t, b.const_scalar(1, dtype)})});
    return b.op("Mul", {h, b.const_scalar(0.5, dtype)});
  }
  EMBER_ERROR("export_onnx: unknown activation {}", kind);
}

void apply_fused_activation(LowerCtx& c, std::string& x) {
  const AttrValue* a = c.n.find("activation");
  if (!a) return;
  const std::string* name = std::get_if<std::string>(a);
  if (!name) c.fail("its activation attribute is not a string");
  x = activation(c.b, *name, x, out_dtype(c));
}

const std::unordered_map<std::string, std::string>& simple_ops() {
  static const std::unordered_map<std::string, std::string> m{
      {"add", "Add"},       {"sub", "Sub"},         {"mul", "Mul"},         {"div", "Div"},
      {"pow", "Pow"},       {"maximum", "Max"},     {"minimum", "Min"},     {"eq", "Equal"},
      {"lt", "Less"},       {"le", "LessOrEqual"},  {"gt", "Greater"},      {"ge", "GreaterOrEqual"},
      {"logical_and", "And"}, {"logical_or", "Or"}, {"logical_xor", "Xor"}, {"logical_not", "Not"},
      {"where", "Where"},   {"neg", "Neg"},         {"abs", "Abs"},         {"exp", "Exp"},
      {"log", "Log"},       {"sqrt", "Sqrt"},       {"sin", "Sin"},         {"cos", "Cos"},
      {"tanh", "Tanh"},     {"sigmoid", "Sigmoid"}, {"relu", "Relu"},       {"erf", "Erf"},
      {"sign", "Sign"},     {"floor", "Floor"},     {"ceil", "Ceil"},       {"round", "Round"},
      {"reciprocal", "Reciprocal"}, {"isnan", "IsNaN"}, {"tan", "Tan"},     {"asin", "Asin"},
      {"acos", "Acos"},     {"atan", "Atan"},       {"sinh", "Sinh"},       {"cosh", "Cosh"},
      {"asinh", "Asinh"},   {"acosh", "Acosh"},     {"atanh", "Atanh"}};
  return m;
}

void lower_simple(LowerCtx& c) {
  std::vector<std::string> ins;
  for (size_t i = 0; i < c.n.inputs.size(); ++i) ins.push_back(c.in(i));
  c.b.op(simple_ops().at(c.n.kind), ins, c.out(0));
}

void lower_composite(LowerCtx& c) {
  Builder& b = c.b;
  const std::string& k = c.n.kind;
  const ScalarType dt = out_dtype(c);
  std::string x = c.in(0), y;
  if (k == "ne") y = b.op("Not", {b.op("Equal", {x, c.in(1)})});
  else if (k == "rsqrt") y = b.op("Reciprocal", {b.op("Sqrt", {x})});
  else if (k == "expm1") y = b.op("Sub", {b.op("Exp", {x}), b.const_scalar(1, dt)});
  else if (k == "log1p") y = b.op("Log", {b.op("Add", {x, b.const_scalar(1, dt)})});
  else if (k == "log2") y = b.op("Div", {b.op("Log", {x}), b.const_scalar(std::numbers::ln2, dt)});
  else if (k == "log10") y = b.op("Div", {b.op("Log", {x}), b.const_scalar(std::numbers::ln10, dt)});
  else if (k == "exp2") y = b.op("Pow", {b.const_scalar(2, dt), x});
  else if (k == "erfc") y = b.op("Sub", {b.const_scalar(1, dt), b.op("Erf", {x})});
  else if (k == "trunc") y = b.op("Mul", {b.op("Sign", {x}), b.op("Floor", {b.op("Abs", {x})})});
  else y = activation(b, k, x, dt);  // silu, gelu, gelu_tanh
  b.finish(y, c.out(0));
}

// Whether x's sign bit is set: x < 0, or 1 / x < 0 for -0.0 (1 / -0 is
// -inf); integers compare with 0.
std::string sign_bit(Builder& b, const std::string& x, ScalarType dt) {
  const std::string zero = b.const_scalar(0, dt), negative = b.op("Less", {x, zero});
  if (!is_floating_point(dt)) return negative;
  return b.op("Or", {negative, b.op("Less", {b.op("Reciprocal", {x}), zero})});
}

// atan2, copysign, hypot and signbit as composites. atan2 follows C's
// signed zeros (atan2(+-0, -0) = +-pi); two infinite arguments give NaN
// where C gives +-pi/4 or +-3pi/4, and hypot squares (so overflows past
// sqrt(max)): both noted, neither met by models in practice.
void lower_signed(LowerCtx& c) {
  Builder& b = c.b;
  const std::string& k = c.n.kind;
  const ScalarType dt = c.g.type(c.n.inputs.at(0)).dtype;
  const std::string x = c.in(0);
  if (k == "signbit") {
    b.finish(sign_bit(b, x, dt), c.out(0));
    return;
  }
  const std::string y = c.in(1);
  if (k == "copysign") {
    const std::string m = b.op("Abs", {x});
    b.finish(b.op("Where", {sign_bit(b, y, dt), b.op("Neg", {m}), m}), c.out(0));
    return;
  }
  if (k == "hypot") {
    b.finish(b.op("Sqrt", {b.op("Add", {b.op("Mul", {x, x}), b.op("Mul", {y, y})})}), c.out(0));
    return;
  }
  // atan2(x = numerator, y = denominator), Ember's argument order.
  const std::string zero = b.const_scalar(0, dt), pi = b.const_scalar(std::numbers::pi, dt);
  const std::string both_zero = b.op("And", {b.op("Equal", {x, zero}), b.op("Equal", {y, zero})});
  const std::string a = b.op("Where", {both_zero, x, b.op("Atan", {b.op("Div", {x, y})})});
  const std::string turned = b.op("Where", {sign_bit(b, x, dt), b.op("Sub", {a, pi}), b.op("Add", {a, pi})});
  b.finish(b.op("Where", {sign_bit(b, y, dt), turned, a}), c.out(0));
}

// fmod is ONNX's Mod with fmod=1 (C's fmod, for floats and integers alike);
// remainder (Python's %) and floor_divide correct it where the signs of the
// remainder and the divisor differ, as Ember's kernels do: the same values,
// not a rounding of a / b.
std::string c_fmod(Builder& b, const std::string& a, const std::string& d) {
  onnx::NodeProto& n = b.node("Mod", {a, d});
  set_attr(n, "fmod", int64_t{1});
  return n.output(0);
}

void lower_modulo(LowerCtx& c) {
  Builder& b = c.b;
  const ScalarType dt = out_dtype(c);
  const std::string a = c.in(0), d = c.in(1), m = c_fmod(b, a, d), zero = b.const_scalar(0, dt);
  if (c.n.kind == "fmod") {
    b.finish(m, c.out(0));
    return;
  }
  // The remainder is nonzero and its sign differs from the divisor's.
  const std::string wrong =
      b.op("And", {b.op("Not", {b.op("Equal", {m, zero})}), b.op("Xor", {b.op("Less", {m, zero}), b.op("Less", {d, zero})})});
  if (c.n.kind == "remainder") {
    b.finish(b.op("Where", {wrong, b.op("Add", {m, d}), m}), c.out(0));
    return;
  }
  // floor_divide, as the kernel (PyTorch's div_floor): (a - fmod(a, d)) / d,
  // less one where the fmod was on the wrong side; for floats then floored,
  // rounded up past .5 (the division's error), and a / d where d is 0.
  const std::string one = b.const_scalar(1, dt);
  std::string q = b.op("Div", {b.op("Sub", {a, m}), d});
  q = b.op("Where", {wrong, b.op("Sub", {q, one}), q});
  if (is_floating_point(dt)) {
    const std::string fl = b.op("Floor", {q});
    const std::string up = b.op("Greater", {b.op("Sub", {q, fl}), b.const_scalar(0.5, dt)});
    q = b.op("Where", {up, b.op("Add", {fl, one}), fl});
    q = b.op("Where", {b.op("Equal", {d, zero}), b.op("Div", {a, d}), q});
  }
  b.finish(q, c.out(0));
}


void lower_copy(LowerCtx& c) {
  // A copy casts and may broadcast (its TensorIter expands the source).
  Builder& b = c.b;
  const TensorType &src = c.g.type(c.n.inputs.at(0)), &dst = c.g.type(c.n.outputs.at(0));
  std::string x = c.in(0);
  if (src.dtype != dst.dtype) {
    onnx::NodeProto& n = b.node("Cast", {x});
    set_attr(n, "to", static_cast<int64_t>(onnx_dtype(dst.dtype)));
    x = n.output(0);
  }
  if (src.shape != dst.shape) {
    std::vector<SymExpr> to = dim_exprs(dst);
    x = b.op("Expand", {x, b.dims(to, -1, false)});
  }
  b.finish(x, c.out(0));
}

void lower_fill(LowerCtx& c) {
  Builder& b = c.b;
  const TensorType& t = c.g.type(c.n.outputs.at(0));
  const std::optional<Scalar> v = c.n.attr_scalar_opt("a");
  if (!v) c.fail("fill without a value");
  onnx::NodeProto& n = b.node("ConstantOfShape", {b.dims(dim_exprs(t), -1, false)}, {c.out(0)});
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto& tp = *a.mutable_t();
  const Tensor s = scalar_tensor(*v, TensorOptions(kFloat64)).to(t.dtype).reshape({1});
  tp.set_data_type(onnx_dtype(t.dtype));
  tp.add_dims(1);
  tp.set_raw_data(s.data_ptr(), static_cast<size_t>(s.nbytes()));
}

void lower_clamp(LowerCtx& c) {
  Builder& b = c.b;
  const ScalarType dt = out_dtype(c);
  const std::optional<Scalar> lo = c.n.attr_scalar_opt("a"), hi = c.n.attr_scalar_opt("b");
  std::vector<std::string> ins{c.in(0), lo ? b.const_scalar(lo->to_double(), dt) : ""};
  if (hi) ins.push_back(b.const_scalar(hi->to_double(), dt));
  b.op("Clip", ins, c.out(0));
}

// ---- matmul, convolution, pooling, batch norm ----

void lower_matmul(LowerCtx& c) {
  Builder& b = c.b;
  const ScalarType dt = out_dtype(c);
  std::string y = b.op("MatMul", {c.in(0), c.in(1)});
  const double alpha = c.n.attr_scalar("alpha").to_double(), beta = c.n.attr_scalar("beta").to_double();
  if (alpha != 1) y = b.op("Mul", {y, b.const_scalar(alpha, dt)});
  if (has_input(c, 2)) y = b.op("Add", {y, c.in(2)});
  if (beta != 0) {
    std::string acc = c.in(3);
    if (beta != 1) acc = b.op("Mul", {acc, b.const_scalar(beta, dt)});
    y = b.op("Add", {y, acc});
  }
  apply_fused_activation(c, y);
  b.finish(y, c.out(0));
}

// Whether Ember chose ceil mode for this output size (both modes can fit).
bool ceil_mode(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, int64_t out) {
  const int64_t span = in + 2 * pad - d * (k - 1) - 1;
  return out != span / s + 1;
}

// A MaxPool/AveragePool from the window attributes named with `prefix`.
std::string pool(LowerCtx& c, const std::string& kind, const std::string& x, const std::string& prefix,
                 const std::vector<int64_t>& in_sizes, const std::vector<int64_t>& out_sizes) {
  const std::vector<int64_t> k = c.n.attr_ints(prefix + "kernel_size"), s = c.n.attr_ints(prefix + "stride"),
                             d = c.n.attr_ints(prefix + "dilation"), p = c.n.attr_ints(prefix + "padding");
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 2) c.fail("pool windows need 2 values each");
  const bool is_max = kind == "max";
  if (!is_max && (d[0] != 1 || d[1] != 1)) c.fail("average pooling with dilation has no ONNX form before opset 19");
  onnx::NodeProto& n = c.b.node(is_max ? "MaxPool" : "AveragePool", {x});
  set_attr(n, "kernel_shape", k);
  set_attr(n, "strides", s);
  set_attr(n, "pads", std::vector<int64_t>{p[0], p[1], p[0], p[1]});
  if (is_max) set_attr(n, "dilations", d);
  else set_attr(n, "count_include_pad", static_cast<int64_t>(c.n.attr_bool(prefix + "count_include_pad")));
  const bool ceil_h = ceil_mode(in_sizes[2], k[0], p[0], s[0], d[0], out_sizes[2]);
  const bool ceil_w = ceil_mode(in_sizes[3], k[1], p[1], s[1], d[1], out_sizes[3]);
  if (ceil_h != ceil_w) c.fail("ceil mode differs between height and width");
  if (ceil_h) set_attr(n, "ceil_mode", int64_t{1});
  return n.output(0);
}

void lower_conv2d(LowerCtx& c) {
  Builder& b = c.b;
  for (const char* runtime_only : {"residual", "post_activation"})
    if (c.n.find(runtime_only))
      c.fail(fmt::format("its '{}' attribute is a fusion of Ember's runtime; export a graph optimised with "
                         "OptimizeTarget::portable", runtime_only));
  const std::vector<int64_t> s = c.n.attr_ints("stride"), d = c.n.attr_ints("dilation"), p = c.n.attr_ints("padding");
  if (s.size() != 2 || d.size() != 2 || p.size() != 4) c.fail("stride, dilation and padding need 2, 2 and 4 values");
  const std::vector<int64_t> x = c.g.type(c.n.inputs.at(0)).sizes(), w = c.g.type(c.n.inputs.at(1)).sizes();
  std::vector<std::string> ins{c.in(0), c.in(1)};
  if (has_input(c, 2)) ins.push_back(c.in(2));
  onnx::NodeProto& n = b.node("Conv", ins);
  set_attr(n, "kernel_shape", std::vector<int64_t>{w[2], w[3]});
  set_attr(n, "strides", s);
  set_attr(n, "dilations", d);
  set_attr(n, "pads", std::vector<int64_t>{p[0], p[2], p[1], p[3]});  // Ember: top, bottom, left, right
  set_attr(n, "group", c.n.attr_int("groups"));
  std::string y = n.output(0);
  apply_fused_activation(c, y);
  if (const AttrValue* pk = c.n.find("pool")) {
    const std::string* kind = std::get_if<std::string>(pk);
    if (!kind) c.fail("its pool attribute is not a string");
    auto conv = [](int64_t in, int64_t k, int64_t st, int64_t di, int64_t pads) { return (in + pads - di * (k - 1) - 1) / st + 1; };
    const std::vector<int64_t> mid{x[0], w[0], conv(x[2], w[2], s[0], d[0], p[0] + p[1]), conv(x[3], w[3], s[1], d[1], p[2] + p[3])};
    y = pool(c, *kind, y, "pool_", mid, c.g.type(c.n.outputs.at(0)).sizes());
  }
  b.finish(y, c.out(0));
}

void lower_pool(LowerCtx& c) {
  if (has_output(c, 1)) c.fail("the pooling indices output has no ONNX lowering");
  const std::string kind = c.n.kind == "avg_pool2d" ? "avg" : "max";
  const std::vector<int64_t> in = c.g.type(c.n.inputs.at(0)).sizes(), out = c.g.type(c.n.outputs.at(0)).sizes();
  c.b.finish(pool(c, kind, c.in(0), "", in, out), c.out(0));
}

void lower_adaptive_avg_pool(LowerCtx& c) {
  const std::vector<int64_t> in = c.g.type(c.n.inputs.at(0)).sizes(), out = c.g.type(c.n.outputs.at(0)).sizes();
  if (in.size() != 4 || out.size() != 4) c.fail("expected 4-D input and output");
  if (out[2] == 1 && out[3] == 1) {
    c.b.op("GlobalAveragePool", {c.in(0)}, c.out(0));
    return;
  }
  if (in[2] % out[2] != 0 || in[3] % out[3] != 0)
    c.fail(fmt::format("adaptive pooling from {}x{} to {}x{} has uneven windows (no ONNX op)", in[2], in[3], out[2], out[3]));
  onnx::NodeProto& n = c.b.node("AveragePool", {c.in(0)}, {c.out(0)});
  set_attr(n, "kernel_shape", std::vector<int64_t>{in[2] / out[2], in[3] / out[3]});
  set_attr(n, "strides", std::vector<int64_t>{in[2] / out[2], in[3] / out[3]});
}

void lower_batch_norm(LowerCtx& c) {
  Builder& b = c.b;
  const TensorType& mean = c.g.type(c.n.inputs.at(1));
  auto param = [&](size_t i, double fill) {
    if (has_input(c, i)) return c.in(i);
    return b.initializer(b.fresh(i == 3 ? "weight" : "bias"), full(mean.sizes(), Scalar(fill), TensorOptions(mean.dtype)));
  };
  onnx::NodeProto& n = b.node("BatchNormalization", {c.in(0), param(3, 1), param(4, 0), c.in(1), c.in(2)}, {c.out(0)});
  set_attr(n, "epsilon", static_cast<float>(c.n.attr_double("eps")));
}

// layer_norm as ReduceMean/Sub/Mul/Sqrt/Div over the last normalized_dims
// axes (LayerNormalization only exists from opset 17); biased variance, as
// the op's.
void lower_layer_norm(LowerCtx& c) {
  Builder& b = c.b;
  const TensorType& t = c.g.type(c.n.inputs.at(0));
  const int64_t k = c.n.attr_int("normalized_dims"), rank = static_cast<int64_t>(t.shape.size());
  std::vector<int64_t> axes;
  for (int64_t a = rank - k; a < rank; ++a) axes.push_back(a);
  auto mean_over = [&](const std::string& v) {
    onnx::NodeProto& n = b.node("ReduceMean", {v});
    set_attr(n, "axes", axes);
    set_attr(n, "keepdims", int64_t{1});
    return n.output(0);
  };
  const std::string x = c.in(0);
  const std::string centred = b.op("Sub", {x, mean_over(x)});
  const std::string var = mean_over(b.op("Mul", {centred, centred}));
  const std::string stdev = b.op("Sqrt", {b.op("Add", {var, b.const_scalar(c.n.attr_double("eps"), t.dtype)})});
  std::string y = b.op("Div", {centred, stdev});
  if (has_input(c, 1)) y = b.op("Mul", {y, c.in(1)});
  if (has_input(c, 2)) y = b.op("Add", {y, c.in(2)});
  b.op("Identity", {y}, c.out(0));
}

void lower_index_select(LowerCtx& c) {
  onnx::NodeProto& n = c.b.node("Gather", {c.in(0), c.in(1)}, {c.out(0)});
  set_attr(n, "axis", c.n.attr_int("dim"));
}

void lower_gather(LowerCtx& c) {
  onnx::NodeProto& n = c.b.node("GatherElements", {c.in(0), c.in(1)}, {c.out(0)});
  set_attr(n, "axis", c.n.attr_int("dim"));
}

// scatter / scatter_add are ScatterElements (with reduction "add", opset
// 16+). ONNX wants updates of the indices' shape; PyTorch reads the leading
// part of a larger src, so a larger src is sliced first.
void lower_scatter(LowerCtx& c) {
  Builder& b = c.b;
  const bool add = c.n.kind == "scatter_add";
  if (add && b.opset() < 16) c.fail("scatter_add needs opset 16 or later (ScatterElements' reduction)");
  const TensorType &idx = c.g.type(c.n.inputs.at(1)), &src = c.g.type(c.n.inputs.at(2));
  std::string updates = c.in(2);
  if (src.shape != idx.shape) {
    std::vector<int64_t> ends;
    for (const auto& d : idx.shape) {
      if (d.is_symbolic()) c.fail("a src larger than a symbolic index has no lowering");
      ends.push_back(d.size);
    }
    std::vector<int64_t> axes(ends.size()), starts(ends.size(), 0);
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    updates = b.op("Slice", {updates, b.const_ints(starts), b.const_ints(ends), b.const_ints(axes)});
  }
  onnx::NodeProto& n = b.node("ScatterElements", {c.in(0), c.in(1), updates}, {c.out(0)});
  set_attr(n, "axis", c.n.attr_int("dim"));
  if (add) set_attr(n, "reduction", std::string("add"));
}

// sort is a TopK over the whole dim (its size may be symbolic), topk one of
// k; ONNX's TopK breaks ties by the lower index, as Ember's stable kernels.
void lower_sort_topk(LowerCtx& c) {
  Builder& b = c.b;
  const TensorType& t = c.g.type(c.n.inputs.at(0));
  const int64_t dim = c.n.attr_int("dim");
  const bool is_sort = c.n.kind == "sort";
  const std::string k = is_sort ? b.dims({dim_exprs(t).at(static_cast<size_t>(dim))}, -1, false)
                                : b.const_ints({c.n.attr_int("k")});
  // Both TopK outputs are required: an unused one gets a fresh name.
  std::vector<std::string> outs{has_output(c, 0) ? c.out(0) : b.fresh("topk_values"),
                                has_output(c, 1) ? c.out(1) : b.fresh("topk_indices")};
  onnx::NodeProto& n = b.node("TopK", {c.in(0), k}, outs);
  set_attr(n, "axis", dim);
  set_attr(n, "largest", static_cast<int64_t>(c.n.attr_bool(is_sort ? "descending" : "largest")));
  set_attr(n, "sorted", int64_t{1});
}

void lower_cat(LowerCtx& c) {
  std::vector<std::string> ins;
  for (size_t i = 0; i < c.n.inputs.size(); ++i) ins.push_back(c.in(i));
  onnx::NodeProto& n = c.b.node("Concat", ins, {c.out(0)});
  set_attr(n, "axis", c.n.attr_int("dim"));
}

// ---- [outer, reduce, inner] kernels ----

// The input in memory order, reshaped to [outer, reduce, inner].
std::string as_geometry(LowerCtx& c) {
  Builder& b = c.b;
  std::string x = c.in(0);
  auto it = c.view_strides.find(c.n.inputs.at(0));
  if (it != c.view_strides.end()) {
    const std::vector<int64_t>& st = it->second;
    std::vector<int64_t> perm(st.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t z) { return st[static_cast<size_t>(a)] > st[static_cast<size_t>(z)]; });
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      onnx::NodeProto& t = b.node("Transpose", {x});
      set_attr(t, "perm", perm);
      x = t.output(0);
    }
  }
  std::vector<SymExpr> geo;
  for (const char* k : {"outer", "reduce", "inner"}) {
    if (!c.n.find(k)) {  // softmax rows: no inner
      geo.push_back(constant_expr(1));
      continue;
    }
    const std::vector<SymExpr> e = sym_ints(c.n, k);
    geo.push_back(e.empty() ? constant_expr(c.n.attr_int(k)) : e[0]);
  }
  return b.op("Reshape", {x, b.dims(geo, geo[0].is_constant() ? -1 : 0)});
}

void reshape_to_output(LowerCtx& c, const std::string& x, size_t o) {
  const TensorType& t = c.g.type(c.n.outputs.at(o));
  c.b.op("Reshape", {x, c.b.dims(dim_exprs(t))}, c.out(o));
}

std::string reduce_op(LowerCtx& c, const std::string& op, const std::string& x, bool keep) {
  Builder& b = c.b;
  if (op == "ReduceSum") {
    onnx::NodeProto& n = b.node(op, {x, b.const_ints({1})});
    set_attr(n, "keepdims", static_cast<int64_t>(keep));
    return n.output(0);
  }
  onnx::NodeProto& n = b.node(op, {x});
  set_attr(n, "axes", std::vector<int64_t>{1});
  set_attr(n, "keepdims", static_cast<int64_t>(keep));
  return n.output(0);
}

void lower_reduce(LowerCtx& c) {
  Builder& b = c.b;
  const std::string& k = c.n.kind;
  const std::string x = as_geometry(c);
  const ScalarType dt = c.n.attr_dtype("out_dtype");
  const int64_t reduce = c.n.attr_int("reduce");
  if (k == "argmax" || k == "argmin") {
    if (has_output(c, 0)) c.fail("the values output of argmax/argmin has no ONNX lowering");
    onnx::NodeProto& n = b.node(k == "argmax" ? "ArgMax" : "ArgMin", {x});
    set_attr(n, "axis", int64_t{1});
    set_attr(n, "keepdims", int64_t{0});
    reshape_to_output(c, n.output(0), 1);
    return;
  }
  if (k == "all" || k == "any") {
    // ONNX reduces no bools: 0/1 as int32, the min for all, the max for any.
    const std::vector<SymExpr> r = sym_ints(c.n, "reduce");
    if ((r.empty() || r[0].is_constant()) && reduce == 0)
      c.fail("all/any over an empty dim has no lowering");  // ReduceMax's empty identity is not false
    onnx::NodeProto& as_int = b.node("Cast", {x});
    set_attr(as_int, "to", static_cast<int64_t>(onnx_dtype(kInt32)));
    onnx::NodeProto& back = b.node("Cast", {reduce_op(c, k == "all" ? "ReduceMin" : "ReduceMax", as_int.output(0), false)});
    set_attr(back, "to", static_cast<int64_t>(onnx_dtype(kBool)));
    reshape_to_output(c, back.output(0), 0);
    return;
  }
  if (k == "var") {
    if (!sym_ints(c.n, "reduce").empty() && !sym_ints(c.n, "reduce")[0].is_constant())
      c.fail("a variance over a symbolic dim has no lowering yet");
    const std::string mean = reduce_op(c, "ReduceMean", x, true);
    const std::string d = b.op("Sub", {x, mean});
    std::string v = b.op("Div", {reduce_op(c, "ReduceSum", b.op("Mul", {d, d}), false),
                                 b.const_scalar(static_cast<double>(reduce) - c.n.attr_double("correction"), dt)});
    if (c.n.attr_bool("take_sqrt")) v = b.op("Sqrt", {v});
    if (has_output(c, 0)) reshape_to_output(c, v, 0);
    if (has_output(c, 1)) reshape_to_output(c, mean, 1);
    return;
  }
  std::string y;
  if (k == "sum") {
    const double scale = c.n.attr_double("scale");
    if (reduce > 0 && std::abs(scale * static_cast<double>(reduce) - 1) < 1e-12) {
      y = reduce_op(c, "ReduceMean", x, false);  // a mean: right for every size of a symbolic dim
    } else {
      y = reduce_op(c, "ReduceSum", x, false);
      if (scale != 1) y = b.op("Mul", {y, b.const_scalar(scale, dt)});
    }
  } else if (k == "prod") {
    y = reduce_op(c, "ReduceProd", x, false);
  } else if (k == "amax") {
    y = reduce_op(c, "ReduceMax", x, false);
  } else if (k == "amin") {
    y = reduce_op(c, "ReduceMin", x, false);
  } else if (k == "logsumexp") {
    y = reduce_op(c, "ReduceLogSumExp", x, false);
  } else if (k == "norm") {
    const double p = c.n.attr_double("p");
    if (p != 1 && p != 2) c.fail(fmt::format("a norm of order {} has no ONNX lowering", p));
    y = reduce_op(c, p == 1 ? "ReduceL1" : "ReduceL2", x, false);
  }
  reshape_to_output(c, y, 0);
}

// cumsum's kernel scans the middle of [outer, reduce, inner].
void lower_cumsum(LowerCtx& c) {
  const std::string x = as_geometry(c);
  onnx::NodeProto& n = c.b.node("CumSum", {x, c.b.const_scalar(1, kInt64)});
  reshape_to_output(c, n.output(0), 0);
}

void lower_softmax(LowerCtx& c) {
  const std::string x = as_geometry(c);
  onnx::NodeProto& n = c.b.node(c.n.attr_bool("log") ? "LogSoftmax" : "Softmax", {x});
  set_attr(n, "axis", int64_t{1});
  reshape_to_output(c, n.output(0), 0);
}

const std::unordered_map<std::string, LowerFn>& table() {
  static const std::unordered_map<std::string, LowerFn> t = [] {
    std::unordered_map<std::string, LowerFn> m;
    for (const auto& [k, v] : simple_ops()) m.emplace(k, lower_simple);
    for (const char* k : {"ne", "rsqrt", "expm1", "log1p", "silu", "gelu", "gelu_tanh", "log2", "log10", "exp2", "erfc",
                          "trunc"})
      m.emplace(k, lower_composite);
    for (const char* k : {"fmod", "remainder", "floor_divide"}) m.emplace(k, lower_modulo);
    for (const char* k : {"atan2", "copysign", "hypot", "signbit"}) m.emplace(k, lower_signed);
    m.emplace("cumsum", lower_cumsum);
    m.emplace("copy", lower_copy);
    m.emplace("fill", lower_fill);
    m.emplace("clamp", lower_clamp);
    m.emplace("matmul", lower_matmul);
    m.emplace("conv2d", lower_conv2d);
    m.emplace("max_pool2d", lower_pool);
    m.emplace("max_pool2d_with_indices", lower_pool);
    m.emplace("avg_pool2d", lower_pool);
    m.emplace("adaptive_avg_pool2d", lower_adaptive_avg_pool);
    m.emplace("batch_norm_apply", lower_batch_norm);
    m.emplace("layer_norm", lower_layer_norm);
    m.emplace("index_select", lower_index_select);
    m.emplace("gather", lower_gather);
    m.emplace("sort", lower_sort_topk);
    m.emplace("scatter", lower_scatter);
    m.emplace("scatter_add", lower_scatter);
    m.emplace("topk", lower_sort_topk);
    m.emplace("cat", lower_cat);
    for (const char* k : {"sum", "prod", "amax", "amin", "argmax", "argmin", "var", "logsumexp", "norm", "all", "any"})
      m.emplace(k, lower_reduce);
    m.emplace("softmax", lower_softmax);
    m.emplace("as_strided", lower_as_strided);
    register_composite_lowerings(m);
    return m;
  }();
  return t;
}

}  // namespace

LowerFn find_lowering(const std::string& kind) {
  auto it = table().find(kind);
  return it == table().end() ? nullptr : it->second;
}

}  // namespace ember::jit::onnx_export

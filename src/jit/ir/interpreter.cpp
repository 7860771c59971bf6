// Note [jit interpreter]: each node calls the kernel its op called while
// tracing, on the tensors the graph gives it, so a replay is bit-identical to
// the eager forward. Elementwise nodes share one replay (a TensorIter over the
// inputs), reductions another (the recorded [outer, reduce, inner] geometry);
// the generic kernels each rebuild their parameter struct from the node's
// attributes and operand shapes. Graphs may come from files, so every replay
// checks its operands before the kernel runs: a kernel trusts its geometry,
// and a wrong size would read or write out of bounds.
#include "ember/jit/interpreter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <variant>
#include <unordered_map>

#include "core/op_registry.h"
#include "ember/core/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/core/tensor_impl.h"
#include "ember/ops/activation.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/rnn.h"
#include "ember/quant/qrnn.h"
#include "jit/ir/arange.h"
#include "jit/ir/control_flow.h"
#include "kernels/kernel_types.h"
#include "kernels/nn.h"
#include "kernels/qgemm.h"
#include "kernels/qstatic.h"
#include "kernels/prepared.h"
#include "kernels/reduce.h"
#include "kernels/scratch.h"
#include "ops/gemm.h"

namespace ember::jit {

namespace {

// A conv2d/matmul node's prepared kernel (Note [prepared kernels] in
// src/kernels/cpu/prepared.cpp), made on the node's first run in a prepared
// graph when its weights are constants, remade when the thread count changes
// (oneDNN splits the work when a primitive is created).
struct FastNode {
  std::unique_ptr<PreparedConv> conv;
  std::unique_ptr<PreparedMatmul> matmul;
  // Static int8 nodes (jit::quantize_static): their oneDNN kernels, made on
  // the first run; null after a try where oneDNN has no JIT kernel (the
  // reference loop runs).
  std::unique_ptr<PreparedQConv> qconv;
  std::unique_ptr<PreparedQLinear> qlinear;
  std::unique_ptr<PreparedQLinearDynamic> qdynamic;  // linear_dynamic_int8
  // rnn_layer_dynamic_int8 with constant weights: them, with the products
  // made for them (PackedLinear::products), kept between runs.
  std::unique_ptr<std::pair<quant::PackedLinear, quant::PackedLinear>> qrnn;  // ih, hh
  int threads = 0;
  bool tried = false;
  // The layouts of the source and residual it was tried with (Note [layout
  // propagation] in src/kernels/cpu/prepared.cpp): remade if they change.
  LayoutRef src_layout, residual_layout;
  bool ready() const { return (conv || matmul) && threads == get_num_threads(); }
};

struct Ctx {
  const Graph& g;
  const std::vector<std::vector<int64_t>>& sizes;  // every value's sizes for this binding
  const std::vector<Tensor>& given;                // per value: its planned buffer, or undefined
  const Node& n;
  size_t index;
  std::vector<Tensor>& in;   // undefined for absent inputs
  std::vector<Tensor>& out;  // filled by the replay
  FastNode* fast = nullptr;                 // this node's slot; null: no prepared kernels
  const std::vector<char>* fixed = nullptr;  // per value: a constant, or a view of one
  // Per input: the blocked layout a prepared conv left it in, null for NCHW
  // (Note [layout propagation]); only conv2d nodes see non-null ones, the
  // interpreter hands every other node plain copies. Empty: all plain.
  std::vector<LayoutRef>* in_layouts = nullptr;
  LayoutRef out_layout;  // set by a conv2d whose output stays blocked
};

[[noreturn]] void bad(const Ctx& c, const std::string& what) {
  EMBER_ERROR("graph node {} ({}): {}", c.index, c.n.kind, what);
}

std::string shape_of(const Tensor& t) { return fmt::format("{}[{}]", to_string(t.dtype()), fmt::join(t.sizes(), ", ")); }

Tensor alloc(const Ctx& c, size_t i) {
  if (i >= c.n.outputs.size() || c.n.outputs[i] == kNoValue) return Tensor();
  const size_t v = static_cast<size_t>(c.n.outputs[i]);
  if (c.given[v].defined()) return c.given[v];
  return empty(c.sizes[v], TensorOptions(c.g.type(c.n.outputs[i]).dtype));
}

const Tensor& input(const Ctx& c, size_t i, const char* what) {
  if (i >= c.in.size() || !c.in[i].defined()) bad(c, fmt::format("missing input {} ({})", i, what));
  return c.in[i];
}

void expect_counts(const Ctx& c, size_t min_in, size_t max_in, size_t outs) {
  if (c.in.size() < min_in || c.in.size() > max_in)
    bad(c, fmt::format("expected {} to {} inputs, got {}", min_in, max_in, c.in.size()));
  if (c.n.outputs.size() != outs) bad(c, fmt::format("expected {} outputs, got {}", outs, c.n.outputs.size()));
  if (c.n.outputs[0] == kNoValue) bad(c, "its first output is absent");
}

// Non-overlapping and dense: the numel elements from data_ptr() are exactly the tensor's.
bool is_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> d;  // (stride, size)
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.size(i) != 1) d.push_back({t.stride(i), t.size(i)});
  std::sort(d.begin(), d.end());
  int64_t expected = 1;
  for (auto [stride, size] : d) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

void check_dtype(const Ctx& c, const Tensor& t, ScalarType want, const char* what) {
  if (t.dtype() != want)
    bad(c, fmt::format("{} has dtype {}, expected {}", what, to_string(t.dtype()), to_string(want)));
}

// ---- blocked activations (Note [layout propagation] in src/kernels/cpu/prepared.cpp) ----

LayoutRef in_layout(const Ctx& c, size_t i) {
  return c.in_layouts && i < c.in_layouts->size() ? (*c.in_layouts)[i] : nullptr;
}

// Replaces every blocked input by a plain NCHW copy, for a kernel that reads NCHW.
void plain_inputs(Ctx& c) {
  if (!c.in_layouts) return;
  for (size_t i = 0; i < c.in_layouts->size() && i < c.in.size(); ++i) {
    LayoutRef& l = (*c.in_layouts)[i];
    if (!l) continue;
    const Tensor& x = c.in[i];
    const auto [ch, h, w] = layout_image_dims(*l);
    if (x.dim() != 4 || x.dtype() != kFloat32 || !x.is_contiguous() || x.size(1) != ch || x.size(2) != h || x.size(3) != w)
      bad(c, fmt::format("input {} {} does not match its blocked layout {}", i, shape_of(x), layout_name(l)));
    Tensor t = empty(x.sizes(), TensorOptions(kFloat32));
    reorder_to_plain(*l, x.size(0), x.data_ptr(), t.data_ptr());
    c.in[i] = std::move(t);
    l = nullptr;
  }
}

// Whether the node lets its output stay in its primitive's layout (jit::propagate_layouts).
bool wants_blocked_output(const Ctx& c) {
  const AttrValue* a = c.n.find("output_layout");
  if (!a) return false;
  const std::string* s = std::get_if<std::string>(a);
  if (!s || (*s != "blocked" && *s != "plain")) bad(c, "output_layout must be \"blocked\" or \"plain\"");
  return *s == "blocked";
}

// ---- elementwise: one TensorIter over the recorded operands ----

bool is_compare(Op op) {
  return op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge;
}
bool is_logical(Op op) {
  return op == Op::logical_and || op == Op::logical_or || op == Op::logical_xor || op == Op::logical_not;
}

void replay_elementwise(Op op, Ctx& c) {
  expect_counts(c, 0, 3, 1);
  Tensor out = alloc(c, 0);
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < c.in.size(); ++i) ins.push_back(&input(c, i, "operand"));
  // Kernels see one dtype per operand as the ops layer prepared it: check it,
  // since an operand of a narrower dtype would be read past its end.
  const ScalarType od = out.dtype();
  for (size_t i = 0; i < ins.size(); ++i) {
    const ScalarType d = ins[i]->dtype();
    std::string what = fmt::format("operand {}", i);
    if (op == Op::copy) continue;
    if (op == Op::where) check_dtype(c, *ins[i], i == 0 ? kBool : od, what.c_str());
    else if (is_compare(op)) check_dtype(c, *ins[i], ins[0]->dtype(), what.c_str());
    else if (is_logical(op)) check_dtype(c, *ins[i], kBool, what.c_str());
    else if (op == Op::isnan) (void)d;
    else check_dtype(c, *ins[i], od, what.c_str());
  }
  if ((is_compare(op) || is_logical(op) || op == Op::isnan) && od != kBool)
    bad(c, fmt::format("its output must be bool, got {}", to_string(od)));
  ElementwiseParams p{c.n.attr_scalar_opt("a"), c.n.attr_scalar_opt("b")};
  const char* name = op_name(op).data();
  switch (ins.size()) {
    case 0: {
      TensorIter it({&out}, 1, name);
      run_elementwise(op, it, p, out.device());
      break;
    }
    case 1: {
      TensorIter it({&out, ins[0]}, 1, name);
      run_elementwise(op, it, p, out.device());
      break;
    }
    case 2: {
      TensorIter it({&out, ins[0], ins[1]}, 1, name);
      run_elementwise(op, it, p, out.device());
      break;
    }
    default: {
      TensorIter it({&out, ins[0], ins[1], ins[2]}, 1, name);
      run_elementwise(op, it, p, out.device());
      break;
    }
  }
  c.out = {out};
}

struct Table {
  std::unordered_map<std::string, Op> ops;
  Table() {
    for (int i = 0; i < kNumOps; ++i) ops.emplace(std::string(op_name(static_cast<Op>(i))), static_cast<Op>(i));
  }
};

const Table& table() {
  static const Table t;
  return t;
}

// ---- a fused elementwise chain (jit::fuse_elementwise) ----

// Note [fused elementwise]: the steps of a chain run on one chunk of
// kChainChunk elements (32 KiB of float32 per operand, so the chunk stays in
// L1/L2 between steps), the chunk's result written once, then the next
// chunk; chunks are split across threads. Each step is the unfused node's
// kernel on a 1-D view (the chain's value so far, in place in the output),
// so the results are bitwise the unfused graph's.
constexpr int64_t kChainChunk = 8192;

Tensor flat_view(const Tensor& t, int64_t begin, int64_t len) {
  return Tensor(make_intrusive<TensorImpl>(t.storage(), t.dtype(), DimVector{len}, DimVector{1},
                                           t.storage_offset() + begin));
}

void replay_fused_elementwise(Ctx& c) {
  if (c.n.outputs.size() != 1 || c.n.outputs[0] == kNoValue) bad(c, "expected one output");
  const AttrValue* ops_attr = c.n.find("ops");
  const std::string* ops_text = ops_attr ? std::get_if<std::string>(ops_attr) : nullptr;
  if (!ops_text) bad(c, "missing its ops");
  std::vector<Op> ops;
  for (size_t b = 0; b <= ops_text->size();) {
    size_t e = std::min(ops_text->find(',', b), ops_text->size());
    const std::string name = ops_text->substr(b, e - b);
    auto it = table().ops.find(name);
    if (!is_chainable_elementwise(name) || it == table().ops.end()) bad(c, fmt::format("'{}' cannot be a fused step", name));
    ops.push_back(it->second);
    b = e + 1;
  }
  const std::vector<int64_t> operands = c.n.attr_ints("operands");
  if (operands.size() != 2 * ops.size()) bad(c, fmt::format("{} steps need {} operands, got {}", ops.size(), 2 * ops.size(), operands.size()));
  Tensor out = alloc(c, 0);
  if (!out.is_contiguous() || !is_floating_point(out.dtype())) bad(c, "its output must be a contiguous float tensor");
  const int64_t numel = out.numel();
  std::vector<Tensor> in(c.in.size());
  for (size_t i = 0; i < c.in.size(); ++i) {
    const Tensor& x = input(c, i, "operand");
    check_dtype(c, x, out.dtype(), "an operand");
    if (x.numel() != 1 && !x.sizes().equals(out.sizes()))
      bad(c, fmt::format("operand {} is neither shaped like the output {} nor one element", shape_of(x), shape_of(out)));
    in[i] = x.is_contiguous() ? x : x.contiguous();
  }
  std::vector<ElementwiseParams> params;
  for (size_t j = 0; j < ops.size(); ++j) {
    const int64_t a = operands[2 * j], b = operands[2 * j + 1];
    for (int64_t k : {a, b})
      if (k < -2 || k >= static_cast<int64_t>(in.size()) || (k == -1 && j == 0))
        bad(c, fmt::format("step {} has an invalid operand {}", j, k));
    if (a == -2) bad(c, fmt::format("step {} has no first operand", j));
    if (j > 0 && a != -1 && b != -1) bad(c, fmt::format("step {} does not read the chain's value", j));
    params.push_back({c.n.attr_scalar_opt("a" + std::to_string(j)), c.n.attr_scalar_opt("b" + std::to_string(j))});
  }
  parallel_for(0, numel, kGrainSize, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; s += kChainChunk) {
      const int64_t len = std::min(kChainChunk, end - s);
      Tensor chunk = flat_view(out, s, len);
      std::vector<Tensor> views(in.size());
      for (size_t i = 0; i < in.size(); ++i)
        views[i] = in[i].numel() == 1 ? Tensor(make_intrusive<TensorImpl>(in[i].storage(), in[i].dtype(), DimVector{},
                                                                          DimVector{}, in[i].storage_offset()))
                                      : flat_view(in[i], s, len);
      for (size_t j = 0; j < ops.size(); ++j) {
        auto operand = [&](int64_t k) { return k == -1 ? &chunk : &views[static_cast<size_t>(k)]; };
        const char* name = op_name(ops[j]).data();
        if (operands[2 * j + 1] == -2) {
          TensorIter it({&chunk, operand(operands[2 * j])}, 1, name);
          run_elementwise(ops[j], it, params[j], out.device());
        } else {
          TensorIter it({&chunk, operand(operands[2 * j]), operand(operands[2 * j + 1])}, 1, name);
          run_elementwise(ops[j], it, params[j], out.device());
        }
      }
    }
  });
  c.out = {out};
}

// ---- reductions: the recorded [outer, reduce, inner] block ----

void reduce_geometry(const Ctx& c, const Tensor& x, int64_t outer, int64_t reduce, int64_t inner) {
  if (outer < 0 || reduce < 0 || inner < 0) bad(c, "negative geometry");
  if (!is_dense(x)) bad(c, fmt::format("its input {} is not dense", shape_of(x)));
  // Products checked by division: no overflow on hostile sizes.
  if (reduce != 0 && inner != 0 && outer > x.numel() / std::max<int64_t>(1, reduce * inner))
    bad(c, "geometry larger than the input");
  if (outer * reduce * inner != x.numel())
    bad(c, fmt::format("geometry [{}, {}, {}] does not cover input {}", outer, reduce, inner, shape_of(x)));
}

void replay_reduce(Op op, Ctx& c) {
  if (c.in.size() != 1 || c.n.outputs.size() != 2) bad(c, "expected 1 input and 2 outputs (values, second)");
  const Tensor& x = input(c, 0, "input");
  const int64_t outer = c.n.attr_int("outer"), reduce = c.n.attr_int("reduce"), inner = c.n.attr_int("inner");
  reduce_geometry(c, x, outer, reduce, inner);
  const ScalarType out_dtype = c.n.attr_dtype("out_dtype");
  check_dtype(c, x, out_dtype, "the input");
  Tensor values = alloc(c, 0), second = alloc(c, 1);
  const bool has_second = op == Op::argmax || op == Op::argmin || op == Op::var;
  if (!has_second && second.defined()) bad(c, "this reduction has no second output");
  if (!values.defined() && !(op == Op::argmax || op == Op::argmin)) bad(c, "its values output is absent");
  for (const Tensor* t : {&values, &second})
    if (t->defined() && t->numel() != outer * inner)
      bad(c, fmt::format("output {} does not hold {} x {} elements", shape_of(*t), outer, inner));
  if (values.defined()) check_dtype(c, values, out_dtype, "the values output");
  if (second.defined()) check_dtype(c, second, op == Op::var ? out_dtype : kInt64, "the second output");
  ReduceIter it;
  it.op = op_name(op).data();
  it.in = x.data_ptr();
  it.in_dtype = x.dtype();
  it.out = values.defined() ? values.data_ptr() : nullptr;
  it.out_dtype = out_dtype;
  it.out2 = second.defined() ? second.data_ptr() : nullptr;
  it.outer = outer;
  it.reduce = reduce;
  it.inner = inner;
  ReduceParams p;
  p.scale = c.n.attr_double("scale");
  p.p = c.n.attr_double("p");
  p.correction = c.n.attr_double("correction");
  p.take_sqrt = c.n.attr_bool("take_sqrt");
  run_reduce(op, it, p, x.device());
  c.out = {values, second};
}

void replay_rowwise(Op op, Ctx& c) {
  expect_counts(c, 1, 1, 1);
  const Tensor& x = input(c, 0, "input");
  if (!x.is_contiguous()) bad(c, "its input must be contiguous");
  Tensor out = alloc(c, 0);
  if (!out.sizes().equals(x.sizes()) || out.dtype() != x.dtype()) bad(c, "output type differs from the input's");
  ReduceIter it;
  it.op = op_name(op).data();
  it.in = x.data_ptr();
  it.in_dtype = x.dtype();
  it.out = out.data_ptr();
  it.out_dtype = x.dtype();
  it.outer = c.n.attr_int("outer");
  it.reduce = c.n.attr_int("reduce");
  it.inner = op == Op::cumsum ? c.n.attr_int("inner") : 1;
  reduce_geometry(c, x, it.outer, it.reduce, it.inner);
  if (op == Op::softmax) {
    if (!is_floating_point(x.dtype())) bad(c, "softmax needs a floating-point input");
    get_kernel<SoftmaxKernel>(Op::softmax, x.device())(it, c.n.attr_bool("log"));
  } else {
    get_kernel<ScanKernel>(Op::cumsum, x.device())(it);
  }
  c.out = {out};
}

// ---- a fused epilogue (jit::fuse_activations, jit::fuse_residual_add): in place on the kernel's output ----

FusedActivation activation_attr(const Ctx& c, const char* attr) {
  const AttrValue* a = c.n.find(attr);
  if (!a) return FusedActivation::None;
  const std::string* name = std::get_if<std::string>(a);
  std::optional<FusedActivation> f = name ? fused_activation_from_name(*name) : std::nullopt;
  if (!f) bad(c, fmt::format("unknown {} {}", attr, name ? *name : std::string("(not a string)")));
  return *f;
}

Epilogue epilogue_of(const Ctx& c) {
  Epilogue e;
  e.act = activation_attr(c, "activation");
  e.residual = c.n.find("residual") != nullptr && c.n.attr_bool("residual");
  e.post = activation_attr(c, "post_activation");
  return e;
}

void apply_activation(const Ctx& c, Tensor& out, FusedActivation a) {
  Op op{};
  switch (a) {
    case FusedActivation::None: return;
    case FusedActivation::Relu: op = Op::relu; break;
    case FusedActivation::Silu: op = Op::silu; break;
    case FusedActivation::Gelu: op = Op::gelu; break;
    case FusedActivation::GeluTanh: op = Op::gelu_tanh; break;
  }
  if (!is_floating_point(out.dtype())) bad(c, "a fused activation needs a floating-point output");
  TensorIter it({&out, &out}, 1, op_name(op).data());
  run_elementwise(op, it, {}, out.device());
}

void apply_activation(const Ctx& c, Tensor& out) { apply_activation(c, out, activation_attr(c, "activation")); }

// The residual operand of a conv2d with residual=true: shaped like its output.
const Tensor* residual_of(const Ctx& c, const Tensor& out) {
  if (!epilogue_of(c).residual) return nullptr;
  const Tensor& r = input(c, 3, "residual");
  if (!r.sizes().equals(out.sizes()) || !r.is_contiguous() || r.dtype() != out.dtype())
    bad(c, fmt::format("residual {} must be a contiguous tensor like the output {}", shape_of(r), shape_of(out)));
  return &r;
}

// The generic path's epilogue after the kernel: activation, residual add, post-activation.
void apply_epilogue(const Ctx& c, Tensor& out, const Tensor* residual) {
  apply_activation(c, out);
  if (residual) {
    TensorIter it({&out, &out, residual}, 1, "add");
    run_elementwise(Op::add, it, {}, out.device());
  }
  apply_activation(c, out, activation_attr(c, "post_activation"));
}

bool fixed(const Ctx& c, size_t i) {
  return c.fixed && i < c.n.inputs.size() && c.n.inputs[i] != kNoValue &&
         (*c.fixed)[static_cast<size_t>(c.n.inputs[i])];
}

// The node's slot when it may get a prepared kernel now: in a prepared
// graph, selected by jit::select_kernels, not tried yet for this thread count.
FastNode* fast_slot(const Ctx& c) {
  if (!c.fast || (c.fast->tried && c.fast->threads == get_num_threads() &&
                  same_layout(c.fast->src_layout, in_layout(c, 0)) && same_layout(c.fast->residual_layout, in_layout(c, 3))))
    return nullptr;
  const AttrValue* k = c.n.find("kernel");
  if (!k) return nullptr;
  const std::string* name = std::get_if<std::string>(k);
  if (!name || *name != "prepared") bad(c, "kernel must be \"prepared\"");
  *c.fast = FastNode{};
  c.fast->tried = true;
  c.fast->threads = get_num_threads();
  c.fast->src_layout = in_layout(c, 0);
  c.fast->residual_layout = in_layout(c, 3);
  return c.fast;
}

// ---- matmul: the GEMM every linalg op lowered to ----

void replay_matmul(Ctx& c) {
  expect_counts(c, 2, 4, 1);
  const Tensor& a = input(c, 0, "a");
  const Tensor& b = input(c, 1, "b");
  const Tensor* bias = c.in.size() > 2 && c.in[2].defined() ? &c.in[2] : nullptr;
  const Tensor* acc = c.in.size() > 3 && c.in[3].defined() ? &c.in[3] : nullptr;
  Tensor out = alloc(c, 0);
  const int64_t od = out.dim();
  if (od != 2 && od != 3) bad(c, fmt::format("output {} must be 2-D or 3-D", shape_of(out)));
  const int64_t m = out.size(od - 2), n = out.size(od - 1), batch = od == 3 ? out.size(0) : 1;
  for (const Tensor* t : {&a, &b}) {
    if (t->dim() < 2 || t->dim() > od) bad(c, fmt::format("operand {} does not fit output {}", shape_of(*t), shape_of(out)));
    if (t->dim() == 3 && t->size(0) != batch && t->size(0) != 1)
      bad(c, fmt::format("operand {} has a batch other than the output's {}", shape_of(*t), batch));
    check_dtype(c, *t, out.dtype(), "an operand");
  }
  const int64_t k = a.size(-1);
  if (a.size(-2) != m || b.size(-2) != k || b.size(-1) != n)
    bad(c, fmt::format("{} @ {} does not give {}", shape_of(a), shape_of(b), shape_of(out)));
  if (bias) {
    if (bias->dim() != 1 || bias->size(0) != n) bad(c, fmt::format("bias {} must be [{}]", shape_of(*bias), n));
    check_dtype(c, *bias, out.dtype(), "the bias");
  }
  const Scalar beta = c.n.attr_scalar("beta");
  if (beta.to_double() != 0) {
    if (!acc || !acc->sizes().equals(out.sizes())) bad(c, "beta != 0 needs the accumulator input of the output's shape");
    check_dtype(c, *acc, out.dtype(), "the accumulator");
    out.copy_(*acc);
  }
  FastNode* f = fast_slot(c);
  if (f && od == 2 && a.dim() == 2 && b.dim() == 2 && a.is_contiguous() && out.dtype() == kFloat32 &&
      beta.to_double() == 0 && c.n.attr_scalar("alpha").to_double() == 1 && fixed(c, 1) &&
      (!bias || (fixed(c, 2) && bias->is_contiguous())) && !c.n.find("residual") && !c.n.find("post_activation"))
    f->matmul = PreparedMatmul::make(m, n, k, MatrixRef{b.data_ptr(), 0, b.stride(0), b.stride(1)},
                                     bias ? bias->data_ptr() : nullptr, activation_attr(c, "activation"));
  if (f && f->matmul) {
    f->matmul->run(a.data_ptr(), out.data_ptr());
  } else {
    gemm(a, b, out, bias, c.n.attr_scalar("alpha"), beta);
    apply_activation(c, out);
  }
  c.out = {out};
}

// The node's slot when its int8 kernel is to be made now (first run, or the
// thread count changed); null otherwise.
FastNode* int8_slot(Ctx& c) {
  if (!c.fast || (c.fast->tried && c.fast->threads == get_num_threads())) return nullptr;
  *c.fast = FastNode{};
  c.fast->tried = true;
  c.fast->threads = get_num_threads();
  return c.fast;
}

// ---- linear_dynamic_int8 (jit::quantize_dynamic): Note [dynamic int8 linear] ----

void replay_linear_dynamic_int8(Ctx& c) {
  expect_counts(c, 4, 5, 1);
  const Tensor x = input(c, 0, "input").contiguous();
  const Tensor& w = input(c, 1, "int8 weight");
  const Tensor& scale = input(c, 2, "weight scales");
  const Tensor& col_sum = input(c, 3, "weight row sums");
  const Tensor* bias = c.in.size() > 4 && c.in[4].defined() ? &c.in[4] : nullptr;
  Tensor out = alloc(c, 0);
  check_dtype(c, x, kFloat32, "the input");
  check_dtype(c, w, kInt8, "the weight");
  check_dtype(c, scale, kFloat32, "the weight scales");
  check_dtype(c, col_sum, kInt32, "the weight row sums");
  check_dtype(c, out, kFloat32, "the output");
  if (w.dim() != 2 || !w.is_contiguous()) bad(c, fmt::format("weight {} must be a contiguous [out, in] matrix", shape_of(w)));
  const int64_t n = w.size(0), k = w.size(1);
  if (x.dim() != 2 || x.size(1) != k) bad(c, fmt::format("input {} does not fit weight {}", shape_of(x), shape_of(w)));
  const int64_t m = x.size(0);
  if (!out.is_contiguous() || out.dim() != 2 || out.size(0) != m || out.size(1) != n)
    bad(c, fmt::format("output {} must be a contiguous [{}, {}]", shape_of(out), m, n));
  for (const Tensor* t : {&scale, &col_sum, bias})
    if (t && (t->dim() != 1 || t->size(0) != n || !t->is_contiguous()))
      bad(c, fmt::format("{} must be a contiguous [{}]", shape_of(*t), n));
  if (bias) check_dtype(c, *bias, kFloat32, "the bias");
  QLinearDynamicArgs a;
  a.x = x.data_ptr<float>();
  a.m = m;
  a.k = k;
  a.n = n;
  a.w = w.data_ptr<int8_t>();
  a.colsum = col_sum.data_ptr<int32_t>();
  a.w_scale = scale.data_ptr<float>();
  a.bias = bias ? bias->data_ptr<float>() : nullptr;
  a.reduce_range = c.n.attr_bool("reduce_range");
  const FusedActivation act = activation_attr(c, "activation");
  a.relu = act == FusedActivation::Relu;  // in the kernel's last pass, the relu kernel's op
  a.y = out.data_ptr<float>();
  // In a prepared graph with a constant weight: its product on packed weights, the same numbers.
  if (FastNode* f = int8_slot(c); f && fixed(c, 1))
    f->qdynamic = PreparedQLinearDynamic::make(m, n, k, a.w, a.reduce_range);
  if (c.fast && c.fast->qdynamic) c.fast->qdynamic->run(a);
  else qlinear_dynamic_f32(a);
  if (!a.relu) apply_activation(c, out, act);
  c.out = {out};
}

// ---- convolution and pooling: the parameter structs, rebuilt and checked ----

void check_4d(const Ctx& c, const Tensor& t, const char* what) {
  if (t.dim() != 4 || !t.is_contiguous()) bad(c, fmt::format("{} {} must be a contiguous 4-D tensor", what, shape_of(t)));
}

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_sum) {
  return (in + pad_sum - d * (k - 1) - 1) / s + 1;
}

// x [n, c_in, ih, iw] -> y [n, c_out, oh, ow] (sizes only: y may be a
// conv output that is never materialised, see replay_conv2d_pool).
ConvParams conv_params(const Ctx& c, IntArrayRef x, const Tensor& w, IntArrayRef y) {
  ConvParams p;
  std::vector<int64_t> s = c.n.attr_ints("stride"), d = c.n.attr_ints("dilation"), pad = c.n.attr_ints("padding");
  if (s.size() != 2 || d.size() != 2 || pad.size() != 4) bad(c, "stride, dilation and padding need 2, 2 and 4 values");
  p.groups = c.n.attr_int("groups");
  p.dtype = w.dtype();
  p.n = x[0], p.c_in = x[1], p.ih = x[2], p.iw = x[3];
  p.c_out = w.size(0), p.kh = w.size(2), p.kw = w.size(3);
  p.oh = y[2], p.ow = y[3];
  p.sh = s[0], p.sw = s[1], p.dh = d[0], p.dw = d[1];
  p.pt = pad[0], p.pb = pad[1], p.pl = pad[2], p.pr = pad[3];
  const bool ok = p.groups > 0 && p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0 && p.pt >= 0 && p.pb >= 0 &&
                  p.pl >= 0 && p.pr >= 0 && p.kh > 0 && p.kw > 0 && p.c_out % p.groups == 0 &&
                  w.size(1) * p.groups == p.c_in && y[0] == p.n && y[1] == p.c_out &&
                  p.oh == conv_out(p.ih, p.kh, p.sh, p.dh, p.pt + p.pb) && p.ow == conv_out(p.iw, p.kw, p.sw, p.dw, p.pl + p.pr) &&
                  p.oh > 0 && p.ow > 0;
  if (!ok)
    bad(c, fmt::format("input [{}], weight {} and output [{}] do not fit stride [{}], dilation [{}], padding [{}], "
                       "groups {}", fmt::join(x, ", "), shape_of(w), fmt::join(y, ", "), fmt::join(s, ", "),
                       fmt::join(d, ", "), fmt::join(pad, ", "), p.groups));
  if (!is_floating_point(p.dtype)) bad(c, "convolution needs floating-point operands");
  return p;
}

ConvParams conv_params(const Ctx& c, const Tensor& data_in, const Tensor& w, const Tensor& data_out, bool transposed) {
  // Forward: x [n, c_in, ih, iw] -> out [n, c_out, oh, ow]; the input-gradient
  // kernel maps [n, c_out, oh, ow] back to [n, c_in, ih, iw].
  const Tensor& x = transposed ? data_out : data_in;
  const Tensor& y = transposed ? data_in : data_out;
  for (const Tensor* t : {&data_in, &data_out}) check_dtype(c, *t, w.dtype(), "an operand");
  return conv_params(c, x.sizes(), w, y.sizes());
}

void replay_conv2d_pool(Ctx& c);

void replay_conv2d(Ctx& c) {
  if (c.n.find("pool")) return replay_conv2d_pool(c);
  expect_counts(c, 2, 4, 1);
  const Tensor& x = input(c, 0, "input");
  const Tensor& w = input(c, 1, "weight");
  const Tensor* b = c.in.size() > 2 && c.in[2].defined() ? &c.in[2] : nullptr;
  Tensor out = alloc(c, 0);
  check_4d(c, x, "input"), check_4d(c, w, "weight"), check_4d(c, out, "output");
  ConvParams p = conv_params(c, x, w, out, false);
  if (b) {
    if (b->dim() != 1 || b->size(0) != p.c_out || !b->is_contiguous()) bad(c, fmt::format("bias {} must be [{}]", shape_of(*b), p.c_out));
    check_dtype(c, *b, x.dtype(), "the bias");
  }
  const Tensor* residual = residual_of(c, out);
  if (!residual && c.in.size() > 3 && c.in[3].defined()) bad(c, "a fourth input needs residual=true");
  FastNode* f = fast_slot(c);
  // conv_small_cin beats oneDNN where it applies (Note [small-c_in
  // convolution]), unless the output stays blocked for the next conv (Note
  // [layout propagation]: W1's first conv then feeds the second with no
  // reorder, and its pool runs blocked).
  if (f && fixed(c, 1) && (!b || fixed(c, 2)) && (!conv2d_small_cin_applies(p) || wants_blocked_output(c))) {
    const ConvLayouts layouts{in_layout(c, 0), residual ? in_layout(c, 3) : nullptr, wants_blocked_output(c),
                              out.numel() * static_cast<int64_t>(out.element_size())};
    f->conv = PreparedConv::make(p, w.data_ptr(), b ? b->data_ptr() : nullptr, epilogue_of(c), nullptr, p.n, layouts);
  }
  if (f && f->conv) {
    f->conv->run(x.data_ptr(), residual ? residual->data_ptr() : nullptr, out.data_ptr());
    c.out_layout = f->conv->dst_layout();
  } else {
    plain_inputs(c);  // x and residual now refer to the plain copies
    get_kernel<Conv2dKernel>(Op::conv2d, x.device())(p, x.data_ptr(), w.data_ptr(), b ? b->data_ptr() : nullptr,
                                                     out.data_ptr());
    apply_epilogue(c, out, residual);
  }
  c.out = {out};
}

void replay_conv2d_backward_input(Ctx& c) {
  expect_counts(c, 2, 2, 1);
  const Tensor& g = input(c, 0, "grad_output");
  const Tensor& w = input(c, 1, "weight");
  Tensor out = alloc(c, 0);
  check_4d(c, g, "input"), check_4d(c, w, "weight"), check_4d(c, out, "output");
  ConvParams p = conv_params(c, g, w, out, true);
  get_kernel<Conv2dBackwardInputKernel>(Op::conv2d_backward_input, g.device())(p, g.data_ptr(), w.data_ptr(),
                                                                               out.data_ptr());
  c.out = {out};
}

int64_t pooled(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  int64_t span = in + 2 * pad - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;  // the last window must start inside
  return out;
}

// The window attributes (named with `prefix`: "" on a pool node, "pool_" on a
// conv2d node that pools) checked against x [n, c, ih, iw] -> out [n, c, oh, ow].
void pool_windows(const Ctx& c, PoolParams& p, const std::string& prefix) {
  std::vector<int64_t> k = c.n.attr_ints(prefix + "kernel_size"), s = c.n.attr_ints(prefix + "stride"),
                       d = c.n.attr_ints(prefix + "dilation"), pad = c.n.attr_ints(prefix + "padding");
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || pad.size() != 2)
    bad(c, "kernel_size, stride, dilation and padding need 2 values each");
  p.kh = k[0], p.kw = k[1], p.sh = s[0], p.sw = s[1], p.dh = d[0], p.dw = d[1], p.pt = pad[0], p.pl = pad[1];
  p.count_include_pad = c.n.attr_bool(prefix + "count_include_pad");
  bool ok = p.kh > 0 && p.kw > 0 && p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0 && p.pt >= 0 && p.pl >= 0 &&
            p.pt <= p.kh / 2 && p.pl <= p.kw / 2 && p.oh >= 1 && p.ow >= 1;
  ok = ok && (p.oh == pooled(p.ih, p.kh, p.pt, p.sh, p.dh, false) || p.oh == pooled(p.ih, p.kh, p.pt, p.sh, p.dh, true));
  ok = ok && (p.ow == pooled(p.iw, p.kw, p.pl, p.sw, p.dw, false) || p.ow == pooled(p.iw, p.kw, p.pl, p.sw, p.dw, true));
  if (!ok)
    bad(c, fmt::format("input [{}, {}, {}, {}] and output [{}, {}, {}, {}] do not fit kernel [{}], stride [{}], "
                       "dilation [{}], padding [{}]", p.n, p.c, p.ih, p.iw, p.n, p.c, p.oh, p.ow, fmt::join(k, ", "),
                       fmt::join(s, ", "), fmt::join(d, ", "), fmt::join(pad, ", ")));
}

PoolParams pool_params(const Ctx& c, const Tensor& x, const Tensor& out, bool windows) {
  check_4d(c, x, "input"), check_4d(c, out, "output");
  PoolParams p;
  p.dtype = x.dtype();
  p.n = x.size(0), p.c = x.size(1), p.ih = x.size(2), p.iw = x.size(3), p.oh = out.size(2), p.ow = out.size(3);
  if (out.size(0) != p.n || out.size(1) != p.c) bad(c, fmt::format("output {} does not match input {}", shape_of(out), shape_of(x)));
  check_dtype(c, out, x.dtype(), "the output");
  if (!is_floating_point(x.dtype())) bad(c, "pooling needs a floating-point input");
  if (windows) pool_windows(c, p, "");
  return p;
}

void replay_pool(Op op, Ctx& c) {
  const bool with_indices = op == Op::max_pool2d_with_indices;
  expect_counts(c, 1, 1, with_indices ? 2 : 1);
  const Tensor& x = input(c, 0, "input");
  if (!x.is_contiguous()) bad(c, "its input must be contiguous");
  Tensor out = alloc(c, 0);
  PoolParams p = pool_params(c, x, out, op != Op::adaptive_avg_pool2d);
  if (op == Op::max_pool2d) {
    get_kernel<MaxPool2dKernel>(op, x.device())(p, x.data_ptr(), out.data_ptr(), nullptr);
    c.out = {out};
  } else if (with_indices) {
    Tensor idx = alloc(c, 1);
    if (!idx.defined() || !idx.sizes().equals(out.sizes()) || idx.dtype() != kInt64) bad(c, "indices must be int64 shaped like the output");
    get_kernel<MaxPool2dKernel>(op, x.device())(p, x.data_ptr(), out.data_ptr(), idx.data_ptr<int64_t>());
    c.out = {out, idx};
  } else if (op == Op::avg_pool2d) {
    get_kernel<AvgPool2dKernel>(op, x.device())(p, x.data_ptr(), out.data_ptr());
    c.out = {out};
  } else {
    if (out.numel() > 0) get_kernel<AdaptiveAvgPool2dKernel>(op, x.device())(p, x.data_ptr(), out.data_ptr());
    c.out = {out};
  }
}

// Note [conv + pool in chunks]: a conv2d node that pools (jit::fuse_pooling)
// runs the convolution on a few images at a time into a scratch block of
// about kPoolChunkBytes (the conv output of one chunk, so it is still in
// cache when the pool reads it), applies the fused activation there and pools
// the chunk straight into the node's output. The full-size conv output is
// never written: at batch 256, W1's first layer would write and read back
// 25 MB. Each chunk runs the same kernels with n = the chunk's images; a
// chunk is at least one image per thread, as the kernels split the batch.
constexpr int64_t kPoolChunkBytes = int64_t{1} << 20;

void replay_conv2d_pool(Ctx& c) {
  expect_counts(c, 2, 3, 1);
  const Tensor& x = input(c, 0, "input");
  const Tensor& w = input(c, 1, "weight");
  const Tensor* b = c.in.size() > 2 && c.in[2].defined() ? &c.in[2] : nullptr;
  Tensor out = alloc(c, 0);
  check_4d(c, x, "input"), check_4d(c, w, "weight"), check_4d(c, out, "output");
  check_dtype(c, x, w.dtype(), "the input");
  check_dtype(c, out, w.dtype(), "the output");
  // The conv output's size follows from the conv attributes; check them and
  // the pool's against it.
  std::vector<int64_t> s = c.n.attr_ints("stride"), d = c.n.attr_ints("dilation"), pad = c.n.attr_ints("padding");
  if (s.size() != 2 || d.size() != 2 || pad.size() != 4 || s[0] <= 0 || s[1] <= 0)
    bad(c, "stride, dilation and padding need 2, 2 and 4 values, strides positive");
  const std::vector<int64_t> conv_out_sizes{x.size(0), w.size(0), conv_out(x.size(2), w.size(2), s[0], d[0], pad[0] + pad[1]),
                                            conv_out(x.size(3), w.size(3), s[1], d[1], pad[2] + pad[3])};
  const ConvParams p = conv_params(c, x.sizes(), w, conv_out_sizes);
  if (b && (b->dim() != 1 || b->size(0) != p.c_out || !b->is_contiguous() || b->dtype() != p.dtype))
    bad(c, fmt::format("bias {} must be [{}]", shape_of(*b), p.c_out));
  PoolParams pp;
  pp.dtype = p.dtype;
  pp.n = p.n, pp.c = p.c_out, pp.ih = p.oh, pp.iw = p.ow, pp.oh = out.size(2), pp.ow = out.size(3);
  if (out.size(0) != p.n || out.size(1) != p.c_out)
    bad(c, fmt::format("output {} does not match the conv's [{}]", shape_of(out), fmt::join(conv_out_sizes, ", ")));
  pool_windows(c, pp, "pool_");
  const std::string kind = std::get_if<std::string>(c.n.find("pool")) ? *std::get_if<std::string>(c.n.find("pool")) : "";
  if (kind != "max" && kind != "avg") bad(c, fmt::format("pool must be \"max\" or \"avg\", got \"{}\"", kind));
  if (c.n.find("residual") || c.n.find("post_activation")) bad(c, "a pooled conv takes no residual");
  const int64_t elsize = static_cast<int64_t>(element_size(p.dtype));
  const int64_t per_image = p.c_out * p.oh * p.ow * elsize;
  const int64_t chunk = std::clamp<int64_t>(kPoolChunkBytes / std::max<int64_t>(per_image, 1),
                                            std::min<int64_t>(get_num_threads(), p.n), std::max<int64_t>(p.n, 1));
  FastNode* f = fast_slot(c);
  if (f && fixed(c, 1) && (!b || fixed(c, 2)) && (!conv2d_small_cin_applies(p) || wants_blocked_output(c))) {
    FusedPool fp{pp, kind == "max"};
    const ConvLayouts layouts{in_layout(c, 0), nullptr, wants_blocked_output(c),
                              out.numel() * static_cast<int64_t>(out.element_size())};
    f->conv = PreparedConv::make(p, w.data_ptr(), b ? b->data_ptr() : nullptr, epilogue_of(c), &fp, chunk, layouts);
  }
  if (f && f->conv) {
    f->conv->run(x.data_ptr(), nullptr, out.data_ptr());
    c.out_layout = f->conv->dst_layout();
    c.out = {out};
    return;
  }
  plain_inputs(c);
  ScratchBuffer scratch(static_cast<size_t>(chunk * per_image));
  const auto conv = get_kernel<Conv2dKernel>(Op::conv2d, x.device());
  const auto* xb = static_cast<const char*>(x.data_ptr());
  auto* ob = static_cast<char*>(out.data_ptr());
  for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
    const int64_t len = std::min(chunk, p.n - n0);
    ConvParams pc = p;
    pc.n = len;
    conv(pc, xb + n0 * p.c_in * p.ih * p.iw * elsize, w.data_ptr(), b ? b->data_ptr() : nullptr, scratch.get());
    Tensor part = from_blob(scratch.get(), {len, p.c_out, p.oh, p.ow}, TensorOptions(p.dtype));
    apply_activation(c, part);
    PoolParams pc_pool = pp;
    pc_pool.n = len;
    void* dst = ob + n0 * pp.c * pp.oh * pp.ow * elsize;
    if (kind == "max") get_kernel<MaxPool2dKernel>(Op::max_pool2d, x.device())(pc_pool, scratch.get(), dst, nullptr);
    else get_kernel<AvgPool2dKernel>(Op::avg_pool2d, x.device())(pc_pool, scratch.get(), dst);
  }
  c.out = {out};
}

// ---- ops replayed through their public function (which checks its arguments) ----

void replay_batch_norm(Ctx& c) {
  expect_counts(c, 3, 5, 1);
  auto opt = [&](size_t i) { return i < c.in.size() ? c.in[i] : Tensor(); };
  c.out = {batch_norm(input(c, 0, "input"), input(c, 1, "running_mean"), input(c, 2, "running_var"), opt(3), opt(4),
                      /*training=*/false, 0.0, c.n.attr_double("eps"))};
}

void replay_layer_norm(Ctx& c) {
  expect_counts(c, 1, 3, 1);
  auto opt = [&](size_t i) { return i < c.in.size() ? c.in[i] : Tensor(); };
  const Tensor& x = input(c, 0, "input");
  const int64_t k = c.n.attr_int("normalized_dims");
  if (k < 1 || k > x.dim()) bad(c, fmt::format("normalized_dims {} is out of range for input {}", k, shape_of(x)));
  std::vector<int64_t> shape(x.sizes().end() - k, x.sizes().end());
  c.out = {layer_norm(x, shape, opt(1), opt(2), c.n.attr_double("eps"))};
}

void replay_index_select(Ctx& c) {
  expect_counts(c, 2, 2, 1);
  c.out = {index_select(input(c, 0, "self"), c.n.attr_int("dim"), input(c, 1, "index"))};
}

void replay_gather(Ctx& c) {
  expect_counts(c, 2, 2, 1);
  c.out = {gather(input(c, 0, "self"), c.n.attr_int("dim"), input(c, 1, "index"))};
}

void replay_scatter(Op op, Ctx& c) {
  expect_counts(c, 3, 3, 1);
  const Tensor &self = input(c, 0, "self"), &index = input(c, 1, "index"), &src = input(c, 2, "src");
  const int64_t dim = c.n.attr_int("dim");
  c.out = {op == Op::scatter ? scatter(self, dim, index, src) : scatter_add(self, dim, index, src)};
}

void replay_sort(Ctx& c) {
  expect_counts(c, 1, 1, 2);
  auto [values, indices] = sort(input(c, 0, "self"), c.n.attr_int("dim"), c.n.attr_bool("descending"));
  c.out = {values, indices};
}

void replay_topk(Ctx& c) {
  expect_counts(c, 1, 1, 2);
  auto [values, indices] = topk(input(c, 0, "self"), c.n.attr_int("k"), c.n.attr_int("dim"), c.n.attr_bool("largest"));
  c.out = {values, indices};
}

void replay_cat(Ctx& c) {
  if (c.n.outputs.size() != 1) bad(c, "expected one output");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < c.in.size(); ++i) parts.push_back(input(c, i, "part"));
  if (parts.empty()) bad(c, "cat needs at least one input");
  c.out = {cat(parts, c.n.attr_int("dim"))};
}

// ---- rnn_layer_dynamic_int8 (jit::quantize_dynamic on an rnn_layer) ----

// Inputs: x, lengths?, h0, c0?, then int8/scale/col_sum of w_ih and of w_hh, b_ih?, b_hh?.
void replay_rnn_layer_dynamic_int8(Ctx& c) {
  expect_counts(c, 12, 12, 3);
  const int64_t cell = c.n.attr_int("cell");
  if (cell < 0 || cell > 3) bad(c, fmt::format("unknown cell {}", cell));
  if (static_cast<RnnCell>(cell) != RnnCell::lstm && c.n.outputs[2] != kNoValue) bad(c, "only an LSTM has a cell-state output");
  const bool rr = c.n.attr_bool("reduce_range");
  using Weights = std::pair<quant::PackedLinear, quant::PackedLinear>;
  auto weights = [&] {
    return Weights(quant::PackedLinear::from_parts(input(c, 4, "w_ih int8"), input(c, 5, "w_ih scales"),
                                                   input(c, 6, "w_ih row sums"), c.in[10], rr),
                   quant::PackedLinear::from_parts(input(c, 7, "w_hh int8"), input(c, 8, "w_hh scales"),
                                                   input(c, 9, "w_hh row sums"), c.in[11], rr));
  };
  // Constant weights (a prepared graph's) are packed once, with the products made for them.
  bool constant = c.fast != nullptr;
  for (size_t i = 4; i < 12; ++i) constant = constant && (fixed(c, i) || (i >= 10 && c.n.inputs[i] == kNoValue));
  if (constant && !c.fast->qrnn) c.fast->qrnn = std::make_unique<Weights>(weights());
  std::optional<Weights> made;
  const auto& [ih, hh] = constant ? *c.fast->qrnn : made.emplace(weights());
  RnnLayerResult r = quant::rnn_layer_dynamic_int8(static_cast<RnnCell>(cell), input(c, 0, "input"), c.in[1],
                                                   input(c, 2, "h0"), c.in[3], ih, hh, c.n.attr_bool("reverse"));
  c.out = {r.output, r.h, c.n.outputs[2] != kNoValue ? r.c : Tensor()};
}

// ---- static int8 (jit::quantize_static): Note [static int8] ----

QActivation int8_input(const Ctx& c, const Tensor& x) {
  if (x.dtype() != kUInt8 && x.dtype() != kInt8) bad(c, fmt::format("input {} must be uint8 or int8", shape_of(x)));
  const double scale = c.n.attr_double("input_scale");
  if (!(scale > 0) || !std::isfinite(scale)) bad(c, fmt::format("input_scale must be positive, got {}", scale));
  return {x.dtype(), static_cast<float>(scale)};
}

QEpilogue int8_epilogue(const Ctx& c, const Tensor& out) {
  QEpilogue e;
  const FusedActivation a = activation_attr(c, "activation");
  if (a != FusedActivation::None && a != FusedActivation::Relu) bad(c, "an int8 node fuses relu only");
  e.relu = a == FusedActivation::Relu;
  e.dst_dtype = out.dtype();
  if (e.dst_dtype == kUInt8) {
    const double scale = c.n.attr_double("output_scale");
    if (!(scale > 0) || !std::isfinite(scale)) bad(c, fmt::format("output_scale must be positive, got {}", scale));
    e.dst_scale = static_cast<float>(scale);
  } else if (e.dst_dtype != kFloat32) {
    bad(c, fmt::format("output {} must be float32 or uint8", shape_of(out)));
  }
  return e;
}

// The weight, its per-channel scales and the optional bias (inputs 1..3).
void check_int8_weights(const Ctx& c, const Tensor& w, const Tensor& scale, const Tensor* bias, int64_t channels) {
  check_dtype(c, w, kInt8, "the weight");
  check_dtype(c, scale, kFloat32, "the weight scales");
  if (!w.is_contiguous() || w.size(0) != channels) bad(c, fmt::format("weight {} must be contiguous with {} rows", shape_of(w), channels));
  for (const Tensor* t : {&scale, bias})
    if (t && (t->dim() != 1 || t->size(0) != channels || !t->is_contiguous() || t->dtype() != kFloat32))
      bad(c, fmt::format("{} must be a contiguous float32 [{}]", shape_of(*t), channels));
}

void replay_quantize_static(Ctx& c) {
  expect_counts(c, 1, 1, 1);
  const Tensor x = input(c, 0, "input").contiguous();
  Tensor out = alloc(c, 0);
  check_dtype(c, x, kFloat32, "the input");
  if (!out.sizes().equals(x.sizes()) || !out.is_contiguous()) bad(c, fmt::format("output {} must be shaped like {}", shape_of(out), shape_of(x)));
  const double scale = c.n.attr_double("scale");
  if (!(scale > 0) || !std::isfinite(scale)) bad(c, fmt::format("scale must be positive, got {}", scale));
  if (out.dtype() != kUInt8 && out.dtype() != kInt8) bad(c, fmt::format("output {} must be uint8 or int8", shape_of(out)));
  quantize_activation(x.data_ptr<float>(), out.data_ptr(), x.numel(), {out.dtype(), static_cast<float>(scale)});
  c.out = {out};
}

void replay_conv2d_int8(Ctx& c) {
  expect_counts(c, 3, 4, 1);
  const Tensor& x = input(c, 0, "input");
  const Tensor& w = input(c, 1, "int8 weight");
  const Tensor& w_scale = input(c, 2, "weight scales");
  const Tensor* b = c.in.size() > 3 && c.in[3].defined() ? &c.in[3] : nullptr;
  Tensor out = alloc(c, 0);
  check_4d(c, x, "input"), check_4d(c, w, "weight"), check_4d(c, out, "output");
  QConvSpec s;
  s.src = int8_input(c, x);
  s.out = int8_epilogue(c, out);
  std::vector<int64_t> st = c.n.attr_ints("stride"), d = c.n.attr_ints("dilation"), pad = c.n.attr_ints("padding");
  if (st.size() != 2 || d.size() != 2 || pad.size() != 4 || st[0] <= 0 || st[1] <= 0 || d[0] <= 0 || d[1] <= 0)
    bad(c, "stride, dilation and padding need 2, 2 and 4 values, strides and dilations positive");
  const bool pooled = c.n.find("pool") != nullptr;
  std::vector<int64_t> conv_sizes = out.sizes().vec();
  if (pooled) {
    conv_sizes[2] = conv_out(x.size(2), w.size(2), st[0], d[0], pad[0] + pad[1]);
    conv_sizes[3] = conv_out(x.size(3), w.size(3), st[1], d[1], pad[2] + pad[3]);
  }
  // conv_params checks the geometry (it wants a float dtype; the int8 operands are checked here).
  Tensor wf = from_blob(w.data_ptr(), w.sizes(), TensorOptions(kFloat32));
  s.p = conv_params(c, x.sizes(), wf, conv_sizes);
  check_int8_weights(c, w, w_scale, b, s.p.c_out);
  if (pooled) {
    const std::string* kind = std::get_if<std::string>(c.n.find("pool"));
    if (!kind || *kind != "max") bad(c, "an int8 conv fuses max pooling only");
    PoolParams pp;
    pp.n = s.p.n, pp.c = s.p.c_out, pp.ih = s.p.oh, pp.iw = s.p.ow, pp.oh = out.size(2), pp.ow = out.size(3);
    pool_windows(c, pp, "pool_");
    s.pool = FusedPool{pp, true};
  }
  if (FastNode* f = int8_slot(c); f && fixed(c, 1) && fixed(c, 2) && (!b || fixed(c, 3)))
    f->qconv = PreparedQConv::make(s, w.data_ptr<int8_t>(), w_scale.data_ptr<float>(), b ? b->data_ptr<float>() : nullptr);
  if (c.fast && c.fast->qconv) c.fast->qconv->run(x.data_ptr(), out.data_ptr());
  else qconv2d_ref(s, x.data_ptr(), w.data_ptr<int8_t>(), w_scale.data_ptr<float>(), b ? b->data_ptr<float>() : nullptr, out.data_ptr());
  c.out = {out};
}

void replay_linear_int8(Ctx& c) {
  expect_counts(c, 3, 4, 1);
  const Tensor x = input(c, 0, "input").contiguous();
  const Tensor& w = input(c, 1, "int8 weight");
  const Tensor& w_scale = input(c, 2, "weight scales");
  const Tensor* b = c.in.size() > 3 && c.in[3].defined() ? &c.in[3] : nullptr;
  Tensor out = alloc(c, 0);
  if (w.dim() != 2) bad(c, fmt::format("weight {} must be [out, in]", shape_of(w)));
  QLinearSpec s;
  s.src = int8_input(c, x);
  s.out = int8_epilogue(c, out);
  s.n = w.size(0), s.k = w.size(1);
  if (x.dim() != 2 || x.size(1) != s.k) bad(c, fmt::format("input {} does not fit weight {}", shape_of(x), shape_of(w)));
  s.m = x.size(0);
  if (!out.is_contiguous() || out.dim() != 2 || out.size(0) != s.m || out.size(1) != s.n)
    bad(c, fmt::format("output {} must be a contiguous [{}, {}]", shape_of(out), s.m, s.n));
  if (s.k > kQGemmMaxK) bad(c, fmt::format("in_features {} exceeds {} (int32 accumulation)", s.k, kQGemmMaxK));
  check_int8_weights(c, w, w_scale, b, s.n);
  if (FastNode* f = int8_slot(c); f && fixed(c, 1) && fixed(c, 2) && (!b || fixed(c, 3)))
    f->qlinear = PreparedQLinear::make(s, w.data_ptr<int8_t>(), w_scale.data_ptr<float>(), b ? b->data_ptr<float>() : nullptr);
  if (c.fast && c.fast->qlinear) c.fast->qlinear->run(x.data_ptr(), out.data_ptr());
  else qlinear_ref(s, x.data_ptr(), w.data_ptr<int8_t>(), w_scale.data_ptr<float>(), b ? b->data_ptr<float>() : nullptr, out.data_ptr());
  c.out = {out};
}

void replay_as_strided(Ctx& c) {
  expect_counts(c, 1, 1, 1);
  const Tensor& base = input(c, 0, "base");
  std::vector<int64_t> sizes = c.n.attr_ints("sizes"), strides = c.n.attr_ints("strides");
  const int64_t offset = base.storage_offset() + c.n.attr_int("offset");
  if (sizes.size() != strides.size()) bad(c, "sizes and strides differ in length");
  // The view must stay inside the base's storage (negative strides: flip).
  int64_t lo = offset, hi = offset;
  bool empty_view = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) bad(c, "negative size");
    if (sizes[i] == 0) empty_view = true;
    const int64_t span_limit = INT64_MAX / 4;
    if (sizes[i] > span_limit || strides[i] > span_limit || strides[i] < -span_limit ||
        (sizes[i] > 1 && std::abs(strides[i]) > span_limit / (sizes[i] - 1)))
      bad(c, "size or stride too large");
    const int64_t ext = (sizes[i] - 1) * strides[i];
    (ext < 0 ? lo : hi) += ext;
  }
  const int64_t capacity = static_cast<int64_t>(base.storage()->nbytes() / base.element_size());
  if (!empty_view && (lo < 0 || hi >= capacity))
    bad(c, fmt::format("view sizes [{}] strides [{}] offset {} leave the base's storage ({} elements)",
                       fmt::join(sizes, ", "), fmt::join(strides, ", "), offset, capacity));
  c.out = {Tensor(make_intrusive<TensorImpl>(base.storage(), base.dtype(), DimVector(sizes), DimVector(strides), offset))};
}

// The layer's own function (Note [rnn_layer] in src/ops/rnn.cpp): it checks
// its operands, and its outputs are the tensors its ops computed.
void replay_rnn_layer(Ctx& c) {
  if (c.in.size() != 8 || c.n.outputs.size() != 3) bad(c, "expected 8 inputs and 3 outputs");
  const int64_t cell = c.n.attr_int("cell");
  if (cell < 0 || cell > 3) bad(c, fmt::format("unknown cell {}", cell));
  const RnnCell kind = static_cast<RnnCell>(cell);
  if (kind != RnnCell::lstm && c.n.outputs[2] != kNoValue) bad(c, "only an LSTM has a cell-state output");
  RnnLayerResult r = rnn_layer(kind, input(c, 0, "input"), c.in[1], input(c, 2, "h0"), c.in[3], input(c, 4, "w_ih"),
                               input(c, 5, "w_hh"), c.in[6], c.in[7], c.n.attr_bool("reverse"));
  c.out = {r.output, r.h, c.n.outputs[2] != kNoValue ? r.c : Tensor()};
}

// start + i * step over the output's (possibly symbolic) length.
void replay_arange(Ctx& c) {
  expect_counts(c, 0, 0, 1);
  Tensor out = alloc(c, 0);
  if (out.dim() != 1 || !out.is_contiguous()) bad(c, fmt::format("expected a contiguous 1-D output, got {}", shape_of(out)));
  write_arange(out, c.n.attr_scalar("start"), c.n.attr_scalar("step"));
  c.out = {out};
}

using Replay = void (*)(Ctx&);

void dispatch(Ctx& c) {
  if (c.n.kind == "as_strided") return replay_as_strided(c);
  if (c.n.kind == "rnn_layer") return replay_rnn_layer(c);
  if (c.n.kind == "arange") return replay_arange(c);
  if (c.n.kind == "linear_dynamic_int8") return replay_linear_dynamic_int8(c);
  if (c.n.kind == "rnn_layer_dynamic_int8") return replay_rnn_layer_dynamic_int8(c);
  if (c.n.kind == "quantize_static") return replay_quantize_static(c);
  if (c.n.kind == "conv2d_int8") return replay_conv2d_int8(c);
  if (c.n.kind == "linear_int8") return replay_linear_int8(c);
  if (c.n.kind == "fused_elementwise") return replay_fused_elementwise(c);
  auto it = table().ops.find(c.n.kind);
  if (it == table().ops.end()) bad(c, "unknown op");
  const Op op = it->second;
  switch (op) {
    case Op::matmul: return replay_matmul(c);
    case Op::conv2d: return replay_conv2d(c);
    case Op::conv2d_backward_input: return replay_conv2d_backward_input(c);
    case Op::max_pool2d:
    case Op::max_pool2d_with_indices:
    case Op::avg_pool2d:
    case Op::adaptive_avg_pool2d: return replay_pool(op, c);
    case Op::batch_norm_apply: return replay_batch_norm(c);
    case Op::layer_norm: return replay_layer_norm(c);
    case Op::index_select: return replay_index_select(c);
    case Op::gather: return replay_gather(c);
    case Op::scatter:
    case Op::scatter_add: return replay_scatter(op, c);
    case Op::sort: return replay_sort(c);
    case Op::topk: return replay_topk(c);
    case Op::cat: return replay_cat(c);
    case Op::softmax:
    case Op::cumsum: return replay_rowwise(op, c);
    default: break;
  }
  if (op_family(op) == OpFamily::Elementwise) return replay_elementwise(op, c);
  if (op_family(op) == OpFamily::Reduce) return replay_reduce(op, c);
  bad(c, "the interpreter cannot run this op yet");
}

// A node whose prepared kernel exists: the operands' sizes and dtypes are
// those it was made for (every value is checked when it is produced), the
// weights are the same constants; only contiguity is left to check. False:
// the caller runs the generic replay (which checks everything).
bool run_fast(Ctx& c) {
  FastNode& f = *c.fast;
  if (c.in.empty() || !c.in[0].defined() || !c.in[0].is_contiguous()) return false;
  const Tensor* residual = nullptr;
  if (f.conv && c.in.size() > 3) {
    residual = &c.in[3];
    if (!residual->defined() || !residual->is_contiguous()) return false;
  }
  // Made for the layouts its operands are in now (the same, unless an
  // earlier node was remade).
  if (f.conv && (!same_layout(in_layout(c, 0), f.conv->src_layout()) ||
                 !same_layout(residual ? in_layout(c, 3) : nullptr, f.conv->residual_layout())))
    return false;
  Tensor out = alloc(c, 0);
  if (!out.is_contiguous()) return false;
  if (f.conv) {
    f.conv->run(c.in[0].data_ptr(), residual ? residual->data_ptr() : nullptr, out.data_ptr());
    c.out_layout = f.conv->dst_layout();
  } else {
    f.matmul->run(c.in[0].data_ptr(), out.data_ptr());
  }
  c.out = {std::move(out)};
  return true;
}

// "float32[batch, 10]": the signature with symbol names.
std::string signature(const TensorType& t) {
  std::vector<std::string> dims;
  for (const Dim& d : t.shape) dims.push_back(d.is_symbolic() ? d.symbol : std::to_string(d.size));
  return fmt::format("{}[{}]", to_string(t.dtype), fmt::join(dims, ", "));
}

}  // namespace

bool is_chainable_elementwise(const std::string& kind) {
  static const std::set<std::string> ops{"add",   "sub",   "mul",   "div",      "pow",    "maximum", "minimum",
                                         "clamp", "neg",   "abs",   "exp",      "expm1",  "log",     "log1p",
                                         "sqrt",  "rsqrt", "sin",   "cos",      "tanh",   "sigmoid", "relu",
                                         "gelu",  "gelu_tanh",      "silu",     "erf",    "sign",    "floor",
                                         "ceil",  "round", "trunc", "reciprocal"};
  return ops.count(kind) > 0;
}

bool interpreter_supports(const std::string& kind) {
  if (kind == "as_strided" || kind == "rnn_layer" || kind == "arange" || kind == "linear_dynamic_int8" ||
      kind == "rnn_layer_dynamic_int8" ||
      is_static_int8_kind(kind) || kind == "fused_elementwise" || is_control_flow(kind))
    return true;
  auto it = table().ops.find(kind);
  if (it == table().ops.end()) return false;
  switch (it->second) {
    case Op::matmul:
    case Op::conv2d:
    case Op::conv2d_backward_input:
    case Op::max_pool2d:
    case Op::max_pool2d_with_indices:
    case Op::avg_pool2d:
    case Op::adaptive_avg_pool2d:
    case Op::batch_norm_apply:
    case Op::layer_norm:
    case Op::index_select:
    case Op::gather:
    case Op::sort:
    case Op::topk:
    case Op::scatter:
    case Op::scatter_add:
    case Op::cat:
    case Op::softmax:
    case Op::cumsum: return true;
    default: return op_family(it->second) != OpFamily::Generic;
  }
}

SymbolValues bind_symbols(const Graph& g, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(inputs.size() == g.inputs.size(), "run: the graph takes {} inputs ({}), got {}", g.inputs.size(),
              [&] {
                std::vector<std::string> n;
                for (const NamedValue& v : g.inputs) n.push_back(v.name);
                return fmt::format("{}", fmt::join(n, ", "));
              }(),
              inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NamedValue& in = g.inputs[i];
    const TensorType& t = g.type(in.value);
    const Tensor& x = inputs[i];
    EMBER_CHECK(x.defined(), "run: input '{}' is undefined; expected {}", in.name, t.str());
    bool ok = x.dtype() == t.dtype && x.dim() == static_cast<int64_t>(t.shape.size());
    for (size_t d = 0; ok && d < t.shape.size(); ++d)
      ok = t.shape[d].is_symbolic() || x.size(static_cast<int64_t>(d)) == t.shape[d].size;
    EMBER_CHECK(ok, "run: input '{}' must be {}, got {}", in.name, signature(t), shape_of(x));
  }
  // A dim that is one symbol binds it; every other symbolic dim must then agree.
  SymbolValues syms;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorType& t = g.type(g.inputs[i].value);
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (!t.shape[d].is_symbolic()) continue;
        const int64_t got = inputs[i].size(static_cast<int64_t>(d));
        SymExpr e = SymExpr::parse(t.shape[d].symbol);
        const bool plain = e.terms.size() == 1 && e.terms[0].coef == 1 && e.terms[0].symbols.size() == 1;
        if (pass == 0 && plain) {
          const std::string& name = e.terms[0].symbols[0];
          EMBER_CHECK(got >= 1, "run: input '{}' dim {} ('{}') must be at least 1, got {}", g.inputs[i].name, d,
                      name, got);
          auto [it, fresh] = syms.emplace(name, got);
          EMBER_CHECK(fresh || it->second == got,
                      "run: input '{}' dim {} is '{}' = {} elsewhere, but {} here ({})", g.inputs[i].name, d, name,
                      it->second, got, shape_of(inputs[i]));
        } else if (pass == 1 && !plain) {
          EMBER_CHECK(e.eval(syms) == got, "run: input '{}' must be {}, got {}", g.inputs[i].name, signature(t),
                      shape_of(inputs[i]));
        }
      }
    }
  return syms;
}

void check_inputs(const Graph& g, const std::vector<Tensor>& inputs) { bind_symbols(g, inputs); }

bool accepts_inputs(const Graph& g, const std::vector<Tensor>& inputs) {
  try {
    bind_symbols(g, inputs);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// ---- PreparedGraph ----

struct PreparedGraph::State {
  const Graph* g = nullptr;
  SymbolValues syms;
  std::vector<Node> resolved;                   // nodes with symbolic attributes evaluated
  std::vector<std::vector<int64_t>> sizes;      // per value
  MemoryPlan plan;
  Tensor arena;                                 // one block of plan.arena_bytes
  std::vector<Tensor> given;                    // per value: a view of the arena, or undefined
  std::vector<Tensor> env, in, out;             // reused between runs
  ScratchPool scratch;                          // the kernels' per-call scratch, kept (Note [kernel scratch])
  std::vector<char> fixed;                      // per value: a constant or a view of one
  std::vector<FastNode> fast;                   // per node: its prepared kernel, once made
  std::vector<LayoutRef> layouts;               // per value: its blocked layout in this run, or null (NCHW)
  std::vector<LayoutRef> in_layouts;            // the current node's inputs' layouts
  std::vector<std::vector<PreparedGraph>> subs;  // per node: its sub-graphs, prepared (Note [control flow])
};

PreparedGraph::PreparedGraph(const Graph& g, SymbolValues symbols) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.g = &g;
  s.syms = std::move(symbols);
  s.resolved.reserve(g.nodes.size());
  for (const Node& n : g.nodes) s.resolved.push_back(n.sym_attrs.empty() ? n : Graph::resolve(n, s.syms));
  s.sizes.reserve(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) s.sizes.push_back(g.sizes(static_cast<int>(v), s.syms));
  s.plan = plan_memory(g, s.sizes);
  s.given.resize(g.values.size());
  if (s.plan.arena_bytes > 0) {
    s.arena = empty({s.plan.arena_bytes}, TensorOptions(kUInt8));
    for (size_t v = 0; v < g.values.size(); ++v) {
      const int b = s.plan.block_of[v];
      if (b < 0) continue;
      const ScalarType dtype = g.type(static_cast<int>(v)).dtype;
      const int64_t offset = s.plan.blocks[static_cast<size_t>(b)].offset / static_cast<int64_t>(element_size(dtype));
      DimVector sizes(s.sizes[v]);
      DimVector strides(sizes.size());
      int64_t stride = 1;
      for (size_t d = sizes.size(); d-- > 0;) {
        strides[d] = stride;
        stride *= std::max<int64_t>(sizes[d], 1);
      }
      s.given[v] = Tensor(make_intrusive<TensorImpl>(s.arena.storage(), dtype, sizes, strides, offset));
    }
  }
  s.env.resize(g.values.size());
  s.fixed.assign(g.values.size(), 0);
  for (const Constant& c : g.constants) s.fixed[static_cast<size_t>(c.value)] = 1;
  for (const Node& n : g.nodes)
    if (n.kind == "as_strided" && n.inputs.size() == 1 && n.inputs[0] != kNoValue && n.outputs.size() == 1 &&
        n.outputs[0] != kNoValue && n.sym_attrs.empty())
      s.fixed[static_cast<size_t>(n.outputs[0])] = s.fixed[static_cast<size_t>(n.inputs[0])];
  s.fast.resize(g.nodes.size());
  s.layouts.resize(g.values.size());
  s.subs.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::shared_ptr<const Graph>& sub : g.nodes[i].subgraphs) s.subs[i].emplace_back(*sub, s.syms);
}

PreparedGraph::~PreparedGraph() = default;
PreparedGraph::PreparedGraph(PreparedGraph&&) noexcept = default;
PreparedGraph& PreparedGraph::operator=(PreparedGraph&&) noexcept = default;

const SymbolValues& PreparedGraph::symbols() const { return s_->syms; }
const MemoryPlan& PreparedGraph::memory_plan() const { return s_->plan; }
std::string PreparedGraph::layout_name(int value) const {
  EMBER_CHECK(value >= 0 && static_cast<size_t>(value) < s_->layouts.size(), "layout_name: no value {}", value);
  return ember::layout_name(s_->layouts[static_cast<size_t>(value)]);
}

std::vector<Tensor> PreparedGraph::run(const std::vector<Tensor>& inputs) {
  State& s = *s_;
  const Graph& g = *s.g;
  // Inputs of exactly the prepared sizes (the common case) need no symbol
  // binding; anything else is bound and checked in full, for the message.
  bool as_prepared = inputs.size() == g.inputs.size();
  for (size_t i = 0; as_prepared && i < inputs.size(); ++i) {
    const int v = g.inputs[i].value;
    as_prepared = inputs[i].defined() && inputs[i].dtype() == g.type(v).dtype &&
                  inputs[i].sizes().equals(s.sizes[static_cast<size_t>(v)]);
  }
  // A sub-graph's inputs may bind only some of the symbols it was prepared
  // with (its enclosing graph's binding); a top-level graph's bind them all.
  if (!as_prepared)
    for (const auto& [name, value] : bind_symbols(g, inputs)) {
      auto it = s.syms.find(name);
      EMBER_CHECK(it != s.syms.end() && it->second == value,
                  "run: these inputs bind the symbolic dims differently from what the graph was prepared for ({} = {})",
                  name, value);
    }
  TraceHookPause pause;
  NoGradGuard no_grad;
  ScratchScope scratch(&s.scratch);
  // Drop everything this run referenced, even when a node throws.
  struct Release {
    State& s;
    ~Release() {
      std::fill(s.env.begin(), s.env.end(), Tensor());
      s.in.clear();
      s.out.clear();
    }
  } release{s};
  for (size_t i = 0; i < inputs.size(); ++i) s.env[static_cast<size_t>(g.inputs[i].value)] = inputs[i].contiguous();
  for (const Constant& c : g.constants) s.env[static_cast<size_t>(c.value)] = c.data;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = s.resolved[i];
    s.in.clear();
    s.out.clear();
    Ctx c{g, s.sizes, s.given, n, i, s.in, s.out, &s.fast[i], &s.fixed, nullptr, nullptr};
    s.in_layouts.clear();
    bool blocked_in = false;
    for (int v : n.inputs) {
      c.in.push_back(v == kNoValue ? Tensor() : s.env.at(static_cast<size_t>(v)));
      s.in_layouts.push_back(v == kNoValue ? nullptr : s.layouts[static_cast<size_t>(v)]);
      blocked_in = blocked_in || s.in_layouts.back();
    }
    if (blocked_in) {
      c.in_layouts = &s.in_layouts;
      if (n.kind != "conv2d") plain_inputs(c);  // only a conv reads a blocked layout
    }
    if (is_control_flow(n.kind)) c.out = run_control_flow(n, i, c.in, s.subs[i]);
    else if (!s.fast[i].ready() || !run_fast(c)) dispatch(c);
    if (c.out.size() != n.outputs.size()) bad(c, "produced the wrong number of outputs");
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o] == kNoValue) continue;
      const TensorType& t = g.type(n.outputs[o]);
      const Tensor& r = c.out[o];
      if (!r.defined() || r.dtype() != t.dtype || !r.sizes().equals(s.sizes[static_cast<size_t>(n.outputs[o])]))
        bad(c, fmt::format("output {} is {}, but the graph types it {}", o, r.defined() ? shape_of(r) : "undefined",
                           signature(t)));
      s.env[static_cast<size_t>(n.outputs[o])] = r;
      s.layouts[static_cast<size_t>(n.outputs[o])] = o == 0 ? c.out_layout : nullptr;
    }
    for (int v : s.plan.dying_after[i]) s.env[static_cast<size_t>(v)] = Tensor();
  }
  std::vector<Tensor> out;
  out.reserve(g.outputs.size());
  for (const NamedValue& o : g.outputs) {
    const Tensor& t = s.env.at(static_cast<size_t>(o.value));
    const LayoutRef& l = s.layouts[static_cast<size_t>(o.value)];
    if (!l) {
      out.push_back(t);
      continue;
    }
    // A returned value is NCHW (jit::propagate_layouts never leaves one blocked; a hand-made graph may).
    Tensor p = empty(t.sizes(), TensorOptions(t.dtype()));
    reorder_to_plain(*l, t.size(0), t.data_ptr(), p.data_ptr());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) {
  return PreparedGraph(g, bind_symbols(g, inputs)).run(inputs);
}

}  // namespace ember::jit

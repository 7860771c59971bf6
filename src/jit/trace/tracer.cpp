// jit::trace: the TraceHook that turns the kernels a forward runs into a Graph.
//
// Note [tracer identity]: the tracer knows a tensor by its TensorImpl (and
// keeps a handle to it, so a freed impl's address is never reused during the
// trace). A tensor it has not seen is looked up by storage: same storage and
// same sizes, strides and offset is the same value (detach(), a copied
// handle); same storage with another geometry is a view the tracer did not
// see, which is an error rather than a silently baked constant. Anything else
// is a constant: a parameter or buffer of the module when its storage is one,
// otherwise an inline constant (scalars, masks, arange positions). In a
// control-flow sub-graph, a tensor not seen is looked up in the enclosing
// trace instead and becomes a capture input (Note [control flow capture]).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "core/op_registry.h"
#include "ember/core/grad_mode.h"
#include "ember/jit/passes/dead_code.h"
#include "ember/jit/trace.h"
#include "ember/ops/view.h"
#include "jit/trace/trace_fixed.h"
#include "jit/trace/tracer.h"

namespace ember::jit {

namespace detail {

Tracer::Geometry Tracer::Geometry::of(const Tensor& t) {
  return {t.dtype(), t.sizes().vec(), t.strides().vec(), t.storage_offset()};
}

Tracer::Tracer(nn::Module& module, const TraceOptions& options) : options_(options) {
  for (auto& [name, t] : module.named_parameters())
    if (t.defined()) params_.emplace(t.storage().get(), Param{name, Constant::Kind::Parameter, t});
  for (auto& [name, t] : module.named_buffers())
    if (t.defined()) params_.emplace(t.storage().get(), Param{name, Constant::Kind::Buffer, t});
}

Tracer::Tracer(Tracer& parent)
    : parent_(&parent), options_(parent.options_), params_(parent.params_), last_param_(parent.last_param_) {}

int Tracer::add_input(const Tensor& t, std::string name, bool from_input) {
  int v = new_value(t, from_input);
  is_input_[static_cast<size_t>(v)] = 1;
  g_.inputs.push_back({std::move(name), v});
  return v;
}

void Tracer::add_node(Node n) {
  if (n.scope.empty()) n.scope = scope();
  g_.nodes.push_back(std::move(n));
}

// ---- TraceHook ----

void Tracer::record(Op op, const std::vector<const Tensor*>& inputs, const std::vector<const Tensor*>& outputs,
                    TraceAttrs attrs) {
  record_composite(op_name(op), inputs, outputs, std::move(attrs));
}

void Tracer::record_composite(std::string_view kind_name, const std::vector<const Tensor*>& inputs,
                              const std::vector<const Tensor*>& outputs, TraceAttrs attrs) {
  const std::string kind(kind_name);
  Node n;
  n.kind = kind;
  n.attrs = std::move(attrs);
  bool dep = false;
  for (const Tensor* t : inputs) {
    int v = t && t->defined() ? lookup(*t) : kNoValue;
    n.inputs.push_back(v);
    if (v != kNoValue) dep = dep || from_input_[static_cast<size_t>(v)];
  }
  for (const Tensor* t : outputs) n.outputs.push_back(t && t->defined() ? bind_output(*t, kind, dep) : kNoValue);
  n.scope = scope();
  g_.nodes.push_back(std::move(n));
}

void Tracer::view(const Tensor& base, const Tensor& v) {
  int b = lookup(base);
  const Geometry bg = geometry_[static_cast<size_t>(b)];
  const Geometry vg = Geometry::of(v);
  // A view with the base's own geometry is still a node: whether a view op
  // is a no-op can depend on sizes, and the graph's structure must not
  // (Note [dynamic dims]).
  if (relaid_.count(b))
    fail(fmt::format("a view of {}, which is not contiguous, cannot be traced yet{}", describe(b),
                     parent_ ? "; make it contiguous() before the control-flow op, or pass it as an operand" : ""));
  Node n;
  n.kind = "as_strided";
  n.inputs = {b};
  n.attrs = {{"sizes", vg.sizes}, {"strides", vg.strides}, {"offset", vg.offset - bg.offset}};
  int out = new_value(v, from_input_[static_cast<size_t>(b)]);
  n.outputs = {out};
  n.scope = scope();
  g_.nodes.push_back(std::move(n));
}

void Tracer::host_read(const Tensor& t, const char* what) {
  int v = find(t);
  if (v == kNoValue && parent_) {
    // A tensor from outside the sub-graph: the enclosing trace decides.
    parent_->host_read(t, what);
    return;
  }
  if (v == kNoValue || !from_input_[static_cast<size_t>(v)]) return;  // a constant: its values are fixed
  std::string msg = fmt::format(
      "{} reads the values of a traced tensor ({}, computed by '{}'){} on the host while tracing: the graph cannot "
      "record control flow or sizes that depend on tensor values. Fix: for a branch or a loop on tensor values, "
      "use jit::cond(pred, then_fn, else_fn, operands) or jit::while_loop(cond_fn, body_fn, carried) "
      "(ember/jit/control_flow.h), which record both branches (the loop body) in the graph; or keep the "
      "computation in tensor ops (where(), masks, clamp); or make the value a fixed option of the module",
      what, g_.type(v).str(), producer_[static_cast<size_t>(v)], near());
  if (options_.strict)
    throw TracingError(msg + "; TraceOptions::strict=false bakes the traced value into the graph with a warning");
  warn(msg + " (strict=false: the value read now is baked into the graph as a constant)");
}

void Tracer::unsupported(std::string_view op, std::string_view why) {
  fail(fmt::format("{} cannot be traced: {}", op, why));
}

// ---- private ----

void Tracer::fail(const std::string& what) { throw TracingError(fmt::format("trace: {}{}", what, near())); }

void Tracer::warn(const std::string& msg) {
  if (options_.warn) options_.warn(msg);
  else fmt::print(stderr, "TracerWarning: {}\n", msg);
}

std::string Tracer::scope() const {
  auto dot = last_param_.rfind('.');
  return dot == std::string::npos ? std::string() : last_param_.substr(0, dot);
}

std::string Tracer::near() const {
  if (last_param_.empty()) return {};
  std::string s = scope();
  return fmt::format(" near module '{}' (the last parameter read was {})", s.empty() ? "<root>" : s, last_param_);
}

std::string Tracer::describe(int v) const {
  for (const Constant& c : g_.constants)
    if (c.value == v) return fmt::format("constant '{}'", c.name);
  for (size_t i = 0; i < capture_inputs_.size(); ++i)
    if (capture_inputs_[i] == v)
      return fmt::format("a tensor captured from outside ({})", parent_->describe(captured_values_[i]));
  return fmt::format("%{}", v);
}

int Tracer::new_value(const Tensor& t, bool from_input, std::string producer) {
  int v = g_.add_value(TensorType::of(t));
  geometry_.push_back(Geometry::of(t));
  from_input_.push_back(from_input);
  is_input_.push_back(0);
  producer_.push_back(std::move(producer));
  bind(t, v);
  return v;
}

void Tracer::bind(const Tensor& t, int v) {
  impls_[t.impl()] = {t, v};
  auto& vs = storages_[t.storage().get()];
  if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
}

// The value of t when the tracer has seen it, else kNoValue.
int Tracer::find(const Tensor& t) {
  auto it = impls_.find(t.impl());
  if (it != impls_.end()) return checked(t, it->second.value);
  auto st = storages_.find(t.storage().get());
  if (st == storages_.end()) return kNoValue;
  const Geometry tg = Geometry::of(t);
  for (auto v = st->second.rbegin(); v != st->second.rend(); ++v)
    if (geometry_[static_cast<size_t>(*v)] == tg) {
      int found = checked(t, *v);
      bind(t, found);
      return found;
    }
  // In a sub-graph, another view of a captured tensor is one more capture.
  if (parent_) return kNoValue;
  fail(fmt::format("a tensor {} shares memory with a traced value through a view the tracer did not see (made "
                   "outside the ops layer?)",
                   TensorType::of(t).str()));
}

int Tracer::checked(const Tensor& t, int v) {
  if (stale_.count(v))
    fail(fmt::format("a tensor {} is read after another view of its memory was written in place; the graph "
                     "cannot express aliasing writes: build the result out of place",
                     g_.type(v).str()));
  if (Geometry::of(t) != geometry_[static_cast<size_t>(v)])
    fail(fmt::format("the shape of a traced tensor was changed in place (now {}, traced as {}); use the "
                     "out-of-place form (unsqueeze, not unsqueeze_)",
                     TensorType::of(t).str(), g_.type(v).str()));
  return v;
}

int Tracer::lookup(const Tensor& t) {
  int v = find(t);
  if (v != kNoValue) {
    note_param(v);
    return v;
  }
  return parent_ ? capture(t) : add_constant(t);
}

void Tracer::note_param(int v) {
  auto it = param_of_value_.find(v);
  if (it != param_of_value_.end()) last_param_ = it->second;
}

int Tracer::add_constant(const Tensor& t) {
  Constant c;
  auto p = params_.find(t.storage().get());
  if (p != params_.end() && Geometry::of(p->second.tensor) == Geometry::of(t)) {
    c.name = p->second.name;
    c.kind = p->second.kind;
    last_param_ = c.name;
  } else {
    c.name = fmt::format("constant.{}", inline_count_++);
    c.kind = Constant::Kind::Inline;
  }
  // Inline constants are frozen now (the forward may overwrite its own
  // temporaries later); parameters are the module's tensors.
  Tensor data;
  {
    TraceHookPause pause;
    NoGradGuard no_grad;
    data = c.kind == Constant::Kind::Inline ? t.detach().contiguous().clone() : t.detach().contiguous();
  }
  c.value = new_value(t, /*from_input=*/false, "constant " + c.name);
  if (!t.is_contiguous()) relaid_.insert(c.value);
  if (c.kind != Constant::Kind::Inline) param_of_value_[c.value] = c.name;
  c.data = data;
  g_.constants.push_back(std::move(c));
  return g_.constants.back().value;
}

// Note [control flow capture] in src/jit/trace/control_flow.cpp.
int Tracer::capture(const Tensor& t) {
  const int outer = parent_->lookup(t);
  last_param_ = parent_->last_param_;
  for (size_t i = 0; i < captured_values_.size(); ++i)
    if (captured_values_[i] == outer) {  // another handle of a value already captured
      bind(t, capture_inputs_[i]);
      return capture_inputs_[i];
    }
  add_capture(t, outer);
  return capture_inputs_.back();
}

void Tracer::add_capture(const Tensor& t, int parent_value) {
  const int v = new_value(t, parent_->from_input(parent_value),
                          "captured " + parent_->producer_[static_cast<size_t>(parent_value)]);
  is_input_[static_cast<size_t>(v)] = 1;
  if (!t.is_contiguous() || t.storage_offset() != 0) relaid_.insert(v);  // a sub-graph gets its inputs contiguous
  auto p = parent_->param_of_value_.find(parent_value);
  if (p != parent_->param_of_value_.end()) param_of_value_[v] = p->second;
  g_.inputs.push_back({fmt::format("capture{}", captured_values_.size()), v});
  captured_tensors_.push_back(t);
  captured_values_.push_back(parent_value);
  capture_inputs_.push_back(v);
}

int Tracer::bind_output(const Tensor& t, const std::string& kind, bool dep) {
  auto p = params_.find(t.storage().get());
  if (p != params_.end())
    fail(fmt::format("{} writes into {} '{}' in place; the graph treats parameters and buffers as constants "
                     "(trace in eval mode, or keep the state out of the forward)",
                     kind, p->second.kind == Constant::Kind::Buffer ? "buffer" : "parameter", p->second.name));
  auto it = impls_.find(t.impl());
  auto st = storages_.find(t.storage().get());
  if (it != impls_.end()) {
    if (parent_ && is_input_[static_cast<size_t>(it->second.value)])
      fail(fmt::format("{} writes in place into {} of a jit::cond / jit::while_loop function; those functions must "
                       "not modify what they receive or capture: use the out-of-place op",
                       kind, describe(it->second.value)));
    // In place over a whole traced tensor: a new SSA value; any other view
    // of the same memory now holds data the graph does not describe.
    if (!t.is_contiguous())
      fail(fmt::format("{} writes in place into a non-contiguous tensor {}; use the out-of-place op", kind,
                       TensorType::of(t).str()));
    for (int other : st->second)
      if (other != it->second.value) stale_.insert(other);
    st->second.clear();
    if (param_of_value_.count(it->second.value))
      fail(fmt::format("{} writes into '{}' in place", kind, param_of_value_[it->second.value]));
  } else if (st != storages_.end() && !st->second.empty()) {
    fail(fmt::format("{} writes into part of a traced tensor (a view of it) in place; the graph cannot express "
                     "partial writes yet: build the result out of place (cat, stack, where)",
                     kind));
  } else if (!t.is_contiguous() || t.storage_offset() != 0) {
    fail(fmt::format("{} wrote a non-contiguous result {}; the tracer expects kernels to write fresh contiguous "
                     "tensors",
                     kind, TensorType::of(t).str()));
  }
  return new_value(t, dep, kind);
}

}  // namespace detail

namespace {

// Restores the module's training flag (trace runs in eval mode).
class EvalModeGuard {
 public:
  explicit EvalModeGuard(nn::Module& m) : module_(m), was_training_(m.is_training()) { m.eval(); }
  ~EvalModeGuard() {
    if (was_training_) module_.train(true);
  }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  nn::Module& module_;
  bool was_training_;
};

}  // namespace

Graph trace_fixed(nn::Module& module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
                  const TraceOptions& options) {
  EMBER_CHECK(!example_inputs.empty(), "trace: expected at least one example input");
  EMBER_CHECK(options.input_names.empty() || options.input_names.size() == example_inputs.size(),
              "trace: {} input names for {} example inputs", options.input_names.size(), example_inputs.size());
  EvalModeGuard eval(module);
  NoGradGuard no_grad;
  detail::Tracer tracer(module, options);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    EMBER_CHECK(example_inputs[i].defined(), "trace: example input {} is undefined", i);
    // Inputs enter the graph contiguous: views are replayed relative to them.
    Tensor x = example_inputs[i].contiguous();
    if (x.impl() == example_inputs[i].impl()) x = x.detach();  // a handle of its own, never a parameter's
    inputs.push_back(x);
    tracer.add_input(x, options.input_names.empty() ? fmt::format("input{}", i) : options.input_names[i]);
  }
  std::vector<Tensor> outputs;
  {
    TraceHookGuard hook(&tracer);
    outputs = fn(inputs);
  }
  EMBER_CHECK(!outputs.empty(), "trace: the traced function returned no outputs");
  EMBER_CHECK(options.output_names.empty() || options.output_names.size() == outputs.size(),
              "trace: {} output names for {} outputs", options.output_names.size(), outputs.size());
  Graph& g = tracer.graph();
  for (size_t i = 0; i < outputs.size(); ++i) {
    EMBER_CHECK(outputs[i].defined(), "trace: output {} is undefined", i);
    g.outputs.push_back({options.output_names.empty() ? fmt::format("output{}", i) : options.output_names[i],
                         tracer.output_value(outputs[i])});
  }
  Graph out = eliminate_dead_code(g);
  check_graph(out, "trace");
  return out;
}

Graph trace(nn::Module& module, const std::vector<Tensor>& example_inputs, const TraceOptions& options) {
  EMBER_CHECK(example_inputs.size() == 1,
              "trace: module.forward takes one input, got {}; pass a TraceFn to trace several", example_inputs.size());
  return trace(
      module, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{module.forward(in[0])}; },
      example_inputs, options);
}

}  // namespace ember::jit

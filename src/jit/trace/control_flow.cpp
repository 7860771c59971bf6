// jit::cond and jit::while_loop: run eagerly, or record a control-flow node
// with sub-graphs while tracing (Note [control flow] in src/jit/ir/control_flow.cpp).
//
// Note [control flow capture]: each branch (loop function) is traced by a
// sub-Tracer whose parent is the enclosing one. Its explicit inputs are
// contiguous copies of the operands (carried values), so nothing the branch
// does touches the caller's tensors, and views are recorded relative to the
// layout the interpreter gives sub-graph inputs. Every other tensor the
// branch reads (a parameter, a value computed before the cond, a constant
// the branch makes, like arange) is looked up in the enclosing trace, where
// it is a value already or becomes a constant, and enters the sub-graph as a
// capture input that the node passes; nested control flow lifts it through
// every level. So branches may close over tensors, weights stay top-level
// constants under one name, and a captured value that follows the inputs
// still does in the graph (it is not frozen). Both sub-graphs of a node take
// the same captures in the same order: the second is traced with the
// first's captures registered, and the first gets the second's extra ones
// as unused inputs. A branch may not write in place into what it receives or
// captures: a tracing error, and for operands an eager error too (version
// counter), so eager and traced runs agree.
//
// While tracing, the caller continues with the values the eager code would
// have produced: the taken branch's results (the predicate is read with the
// hook paused), or the loop run eagerly with the hook paused; copies of them
// are bound to the node's outputs.
#include "ember/jit/control_flow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/core/grad_mode.h"
#include "ember/core/trace_hook.h"
#include "jit/trace/tracer.h"

namespace ember::jit {

namespace {

using detail::Tracer;

std::string type_str(const Tensor& t) { return TensorType::of(t).str(); }

void check_predicate(const Tensor& p, const char* what) {
  EMBER_CHECK(p.defined(), "{} is undefined; expected a bool tensor of one element", what);
  EMBER_CHECK(p.dtype() == kBool && p.numel() == 1,
              "{} must be a bool tensor of one element, got {}; compare to get one (x.sum() > 0, (n < 3).all())",
              what, type_str(p));
}

void check_defined(const std::vector<Tensor>& ts, const char* op, const char* what) {
  for (size_t i = 0; i < ts.size(); ++i) EMBER_CHECK(ts[i].defined(), "{}: {} {} is undefined", op, what, i);
}

// fn(args), refusing in-place writes into the arguments (Note [control flow capture]).
std::vector<Tensor> call_pure(const BranchFn& fn, const std::vector<Tensor>& args, const char* op, const char* name) {
  std::vector<uint32_t> versions;
  for (const Tensor& a : args) versions.push_back(a.version());
  std::vector<Tensor> out = fn(args);
  for (size_t i = 0; i < args.size(); ++i)
    EMBER_CHECK(args[i].version() == versions[i],
                "{}: {} wrote in place into its argument {} {}; the functions must not modify what they receive "
                "(the traced graph could not express it): use the out-of-place op",
                op, name, i, type_str(args[i]));
  check_defined(out, op, fmt::format("{} returned an undefined tensor as output", name).c_str());
  return out;
}

// body_fn's results must match the carried values' dtypes and shapes.
void check_carried(const std::vector<Tensor>& next, const std::vector<Tensor>& carried, const std::string& when) {
  EMBER_CHECK(next.size() == carried.size(), "jit::while_loop: body_fn returned {} tensors for {} carried values{}",
              next.size(), carried.size(), when);
  for (size_t i = 0; i < next.size(); ++i)
    EMBER_CHECK(next[i].dtype() == carried[i].dtype() && next[i].sizes().equals(carried[i].sizes()),
                "jit::while_loop: body_fn returned {} for carried value {}, which is {}{}; a carried value keeps its "
                "dtype and shape",
                type_str(next[i]), i, type_str(carried[i]), when);
}

std::vector<Tensor> eager_while(const LoopCondFn& cond_fn, const BranchFn& body_fn, const std::vector<Tensor>& carried) {
  const BranchFn cond_branch = [&](const std::vector<Tensor>& s) { return std::vector<Tensor>{cond_fn(s)}; };
  std::vector<Tensor> state = carried;
  for (int64_t iteration = 0;; ++iteration) {
    const Tensor p = call_pure(cond_branch, state, "jit::while_loop", "cond_fn")[0];
    check_predicate(p, "jit::while_loop: cond_fn's result");
    if (!p.item<bool>()) return state;
    std::vector<Tensor> next = call_pure(body_fn, state, "jit::while_loop", "body_fn");
    check_carried(next, state, fmt::format(" (iteration {})", iteration));
    state = std::move(next);
  }
}

// ---- tracing ----

Tracer* active_tracer() { return dynamic_cast<Tracer*>(trace_hook()); }

// New tensors with the same values, unseen by the tracer.
std::vector<Tensor> fresh_copies(const std::vector<Tensor>& ts) {
  TraceHookPause pause;
  NoGradGuard no_grad;
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.contiguous().clone());
  return out;
}

struct SubTrace {
  Graph graph;
  std::vector<Tensor> captured_tensors;
  std::vector<int> captured_values;  // in the parent's graph
  std::vector<Tensor> results;       // what fn computed
};

// fn traced into a sub-graph taking args (parent values arg_values), then the
// captures of `shared` (another sub-graph of the same node), then its own.
SubTrace trace_sub(Tracer& parent, const BranchFn& fn, const char* op, const char* name,
                   const std::vector<Tensor>& args, const std::vector<int>& arg_values, const char* arg_prefix,
                   const SubTrace* shared) {
  Tracer sub(parent);
  const std::vector<Tensor> in = fresh_copies(args);
  for (size_t i = 0; i < in.size(); ++i)
    sub.add_input(in[i], fmt::format("{}{}", arg_prefix, i), parent.from_input(arg_values[i]));
  if (shared)
    for (size_t i = 0; i < shared->captured_values.size(); ++i)
      sub.add_capture(shared->captured_tensors[i], shared->captured_values[i]);
  std::vector<Tensor> out;
  {
    TraceHookGuard hook(&sub);
    out = fn(in);
  }
  check_defined(out, op, fmt::format("{} returned an undefined tensor as output", name).c_str());
  for (size_t i = 0; i < out.size(); ++i) sub.graph().outputs.push_back({fmt::format("output{}", i), sub.output_value(out[i])});
  return {std::move(sub.graph()), sub.captured_tensors(), sub.captured_values(), std::move(out)};
}

// `first` takes the captures `second` added after first's own, as unused inputs.
void share_captures(SubTrace& first, const SubTrace& second) {
  for (size_t j = first.captured_values.size(); j < second.captured_values.size(); ++j) {
    const int v = first.graph.add_value(TensorType::of(second.captured_tensors[j]));
    first.graph.inputs.push_back({fmt::format("capture{}", j), v});
    first.captured_tensors.push_back(second.captured_tensors[j]);
    first.captured_values.push_back(second.captured_values[j]);
  }
}

std::vector<int> values_of(Tracer& t, const std::vector<Tensor>& ts) {
  std::vector<int> v;
  for (const Tensor& x : ts) v.push_back(t.value_of(x));
  return v;
}

// Binds copies of `results` as the outputs of `n` and adds it to the graph.
std::vector<Tensor> add_control_flow_node(Tracer& t, Node n, const std::vector<Tensor>& results) {
  bool dep = false;
  for (int v : n.inputs) dep = dep || t.from_input(v);
  std::vector<Tensor> out = fresh_copies(results);
  for (const Tensor& r : out) n.outputs.push_back(t.add_result(r, dep, n.kind));
  t.add_node(std::move(n));
  return out;
}

std::vector<Tensor> trace_cond(Tracer& t, const Tensor& pred, const BranchFn& then_fn, const BranchFn& else_fn,
                               const std::vector<Tensor>& operands) {
  const int p = t.value_of(pred);
  const std::vector<int> args = values_of(t, operands);
  SubTrace a = trace_sub(t, then_fn, "jit::cond", "then_fn", operands, args, "operand", nullptr);
  SubTrace b = trace_sub(t, else_fn, "jit::cond", "else_fn", operands, args, "operand", &a);
  share_captures(a, b);
  const size_t n_out = a.results.size();
  EMBER_CHECK(n_out == b.results.size(),
              "jit::cond: then_fn returns {} tensors but else_fn returns {}; both branches must return the same "
              "number of tensors with the same dtypes and shapes",
              n_out, b.results.size());
  for (size_t i = 0; i < n_out; ++i)
    EMBER_CHECK(TensorType::of(a.results[i]) == TensorType::of(b.results[i]),
                "jit::cond: output {} is {} from then_fn but {} from else_fn; both branches must return the same "
                "dtypes and shapes (the graph types its outputs once)",
                i, type_str(a.results[i]), type_str(b.results[i]));
  bool taken = false;
  {
    TraceHookPause pause;
    taken = pred.item<bool>();
  }
  Node n;
  n.kind = "cond";
  n.inputs = {p};
  n.inputs.insert(n.inputs.end(), args.begin(), args.end());
  n.inputs.insert(n.inputs.end(), b.captured_values.begin(), b.captured_values.end());
  std::vector<Tensor> results = taken ? std::move(a.results) : std::move(b.results);
  n.subgraphs = {std::make_shared<const Graph>(std::move(a.graph)), std::make_shared<const Graph>(std::move(b.graph))};
  return add_control_flow_node(t, std::move(n), results);
}

std::vector<Tensor> trace_while(Tracer& t, const LoopCondFn& cond_fn, const BranchFn& body_fn,
                                const std::vector<Tensor>& carried) {
  const std::vector<int> state = values_of(t, carried);
  const BranchFn cond_branch = [&](const std::vector<Tensor>& s) { return std::vector<Tensor>{cond_fn(s)}; };
  SubTrace c = trace_sub(t, cond_branch, "jit::while_loop", "cond_fn", carried, state, "carried", nullptr);
  check_predicate(c.results[0], "jit::while_loop: cond_fn's result");
  SubTrace b = trace_sub(t, body_fn, "jit::while_loop", "body_fn", carried, state, "carried", &c);
  check_carried(b.results, carried, "");
  share_captures(c, b);
  Node n;
  n.kind = "while_loop";
  n.inputs = state;
  n.inputs.insert(n.inputs.end(), b.captured_values.begin(), b.captured_values.end());
  n.attrs = {{"carried", static_cast<int64_t>(carried.size())}};
  n.subgraphs = {std::make_shared<const Graph>(std::move(c.graph)), std::make_shared<const Graph>(std::move(b.graph))};
  std::vector<Tensor> final_state;
  {
    TraceHookPause pause;
    final_state = eager_while(cond_fn, body_fn, carried);
  }
  return add_control_flow_node(t, std::move(n), final_state);
}

}  // namespace

std::vector<Tensor> cond(const Tensor& pred, const BranchFn& then_fn, const BranchFn& else_fn,
                         const std::vector<Tensor>& operands) {
  check_predicate(pred, "jit::cond: pred");
  check_defined(operands, "jit::cond", "operand");
  EMBER_CHECK(then_fn && else_fn, "jit::cond: then_fn and else_fn must be callable");
  if (Tracer* t = active_tracer()) return trace_cond(*t, pred, then_fn, else_fn, operands);
  const bool taken = pred.item<bool>();
  return call_pure(taken ? then_fn : else_fn, operands, "jit::cond", taken ? "then_fn" : "else_fn");
}

std::vector<Tensor> while_loop(const LoopCondFn& cond_fn, const BranchFn& body_fn, const std::vector<Tensor>& carried) {
  EMBER_CHECK(!carried.empty(), "jit::while_loop: expected at least one carried value");
  check_defined(carried, "jit::while_loop", "carried value");
  EMBER_CHECK(cond_fn && body_fn, "jit::while_loop: cond_fn and body_fn must be callable");
  if (Tracer* t = active_tracer()) return trace_while(*t, cond_fn, body_fn, carried);
  return eager_while(cond_fn, body_fn, carried);
}

}  // namespace ember::jit

// Note [control flow]: jit::cond and jit::while_loop (ember/jit/control_flow.h)
// record one node that holds sub-graphs, the script equivalent of an `if` or
// a loop that depends on tensor values:
//   cond:       inputs [pred, x_1..x_n, captures...], outputs [y_1..y_m],
//               sub-graphs {then, else}
//   while_loop: inputs [c_1..c_n, captures...], attribute carried = n,
//               outputs [c_1'..c_n'], sub-graphs {cond, body}
// Every sub-graph takes the node's inputs after the predicate (operands or
// carried values, then captures), typed alike. then and else return the
// node's outputs; a loop's cond returns one bool element, its body the next
// carried values, typed as the carried inputs (a carried value keeps its
// dtype and shape across iterations). A predicate is a bool tensor of one
// element. Captures are values of the enclosing graph that a branch reads
// without receiving them as operands (a weight, a mask computed before the
// cond): the tracer lifts them into node inputs, so sub-graphs hold no
// constants (every weight lives once, in the top-level graph and its file)
// and never reach outside themselves. Sub-graph shapes may use the enclosing
// graph's symbols: a sub-graph is prepared with the enclosing binding.
//
// The interpreter runs the chosen sub-graph as a nested PreparedGraph,
// prepared once with its parent (a loop reuses its sub-graphs' arenas every
// iteration). A node's outputs are contiguous, as the tracer saw them (views
// of them were recorded against that layout), and an output that shares
// memory with a node input (a branch that returns its operand, or a view of
// it) is copied: the enclosing memory plan may reuse that input's block once
// the node has run. A loop runs until its cond says stop; no iteration limit.
#include "jit/ir/control_flow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ember::jit {

bool is_control_flow(const std::string& kind) { return kind == "cond" || kind == "while_loop"; }

std::vector<std::string> subgraph_names(const std::string& kind) {
  if (kind == "cond") return {"then", "else"};
  if (kind == "while_loop") return {"cond", "body"};
  return {};
}

namespace {

bool is_predicate(const TensorType& t) {
  if (t.dtype != kBool) return false;
  for (const Dim& d : t.shape)
    if (d.is_symbolic() || d.size != 1) return false;
  return true;
}

// The sub-graph takes `args` (values of g).
void check_takes(const Graph& g, const Graph& sub, const std::string& where, const std::vector<int>& args) {
  EMBER_CHECK(sub.inputs.size() == args.size(), "{}: takes {} inputs, but the node passes {}", where,
              sub.inputs.size(), args.size());
  for (size_t i = 0; i < args.size(); ++i)
    EMBER_CHECK(sub.type(sub.inputs[i].value) == g.type(args[i]),
                "{}: input {} ('{}') is typed {}, but the node passes {}", where, i, sub.inputs[i].name,
                sub.type(sub.inputs[i].value).str(), g.type(args[i]).str());
}

// The sub-graph takes `args` and returns values typed as `outs` (values of g).
void check_signature(const Graph& g, const Graph& sub, const std::string& where, const std::vector<int>& args,
                     const std::vector<int>& outs) {
  check_takes(g, sub, where, args);
  EMBER_CHECK(sub.outputs.size() == outs.size(), "{}: returns {} values, but the node has {} outputs", where,
              sub.outputs.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    EMBER_CHECK(sub.type(sub.outputs[i].value) == g.type(outs[i]),
                "{}: output {} ('{}') is typed {}, but the node's output {} is {}", where, i, sub.outputs[i].name,
                sub.type(sub.outputs[i].value).str(), i, g.type(outs[i]).str());
}

void check_cond(const Graph& g, const Node& n, const std::string& where) {
  EMBER_CHECK(!n.inputs.empty() && is_predicate(g.type(n.inputs[0])),
              "{}: input 0 must be the predicate, a bool tensor of one element, got {}", where,
              n.inputs.empty() ? std::string("no inputs") : g.type(n.inputs[0]).str());
  const std::vector<int> args(n.inputs.begin() + 1, n.inputs.end());
  for (size_t k = 0; k < 2; ++k)
    check_signature(g, *n.subgraphs[k], fmt::format("{}: sub-graph '{}'", where, k == 0 ? "then" : "else"), args,
                    n.outputs);
}

void check_while(const Graph& g, const Node& n, const std::string& where) {
  const int64_t carried = n.attr_int("carried");
  EMBER_CHECK(carried >= 1 && carried <= static_cast<int64_t>(n.inputs.size()),
              "{}: attribute carried = {} must be between 1 and the number of inputs ({})", where, carried,
              n.inputs.size());
  const std::vector<int> state(n.inputs.begin(), n.inputs.begin() + carried);
  EMBER_CHECK(n.outputs.size() == state.size(), "{}: {} outputs for {} carried values", where, n.outputs.size(),
              state.size());
  for (size_t i = 0; i < state.size(); ++i)
    EMBER_CHECK(g.type(n.outputs[i]) == g.type(state[i]),
                "{}: output {} is typed {}, but carried value {} is {} (a carried value keeps its type)", where, i,
                g.type(n.outputs[i]).str(), i, g.type(state[i]).str());
  const Graph& cond = *n.subgraphs[0];
  const std::string cwhere = fmt::format("{}: sub-graph 'cond'", where);
  EMBER_CHECK(cond.outputs.size() == 1 && is_predicate(cond.type(cond.outputs[0].value)),
              "{}: must return one bool tensor of one element, got {}", cwhere,
              cond.outputs.size() == 1 ? cond.type(cond.outputs[0].value).str()
                                       : fmt::format("{} values", cond.outputs.size()));
  check_takes(g, cond, cwhere, n.inputs);
  check_signature(g, *n.subgraphs[1], fmt::format("{}: sub-graph 'body'", where), n.inputs, state);
}

}  // namespace

void check_control_flow(const Graph& g, const Node& n, const std::string& where) {
  if (!is_control_flow(n.kind)) {
    EMBER_CHECK(n.subgraphs.empty(), "{}: only cond and while_loop nodes hold sub-graphs, this one has {}", where,
                n.subgraphs.size());
    return;
  }
  const std::vector<std::string> names = subgraph_names(n.kind);
  EMBER_CHECK(n.subgraphs.size() == names.size(), "{}: expected {} sub-graphs ({}), got {}", where, names.size(),
              fmt::join(names, ", "), n.subgraphs.size());
  for (int v : n.inputs) EMBER_CHECK(v != kNoValue, "{}: a control-flow node has no optional inputs", where);
  for (int v : n.outputs) EMBER_CHECK(v != kNoValue, "{}: a control-flow node has no absent outputs", where);
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string sub_where = fmt::format("{}: sub-graph '{}'", where, names[k]);
    EMBER_CHECK(n.subgraphs[k] != nullptr, "{} is missing", sub_where);
    EMBER_CHECK(n.subgraphs[k]->constants.empty(),
                "{} holds {} constants; sub-graphs take what they read from outside as inputs (Note [control "
                "flow])",
                sub_where, n.subgraphs[k]->constants.size());
    check_graph(*n.subgraphs[k], sub_where);
  }
  if (n.kind == "cond") check_cond(g, n, where);
  else check_while(g, n, where);
}

namespace {

bool read_predicate(const Tensor& p, const char* what) {
  EMBER_CHECK(p.dtype() == kBool && p.numel() == 1, "{} must be a bool tensor of one element, got {}[{}]", what,
              to_string(p.dtype()), fmt::join(p.sizes(), ", "));
  return p.item<bool>();
}

// Outputs are contiguous (as the tracer recorded them: views of them were
// traced relative to that layout) and share no memory with an input (Note
// [control flow]).
void unalias(std::vector<Tensor>& outs, const std::vector<Tensor>& inputs) {
  for (Tensor& t : outs) {
    t = t.contiguous();
    for (const Tensor& x : inputs)
      if (x.defined() && t.storage().get() == x.storage().get()) {
        t = t.clone();
        break;
      }
  }
}

std::vector<Tensor> run_sub(const Node& n, size_t index, size_t k, PreparedGraph& sub, const std::vector<Tensor>& args) {
  try {
    return sub.run(args);
  } catch (const Error& e) {
    EMBER_ERROR("graph node {} ({}), sub-graph '{}': {}", index, n.kind, subgraph_names(n.kind)[k], e.what());
  }
}

}  // namespace

std::vector<Tensor> run_control_flow(const Node& n, size_t index, const std::vector<Tensor>& in,
                                     std::vector<PreparedGraph>& subs) {
  EMBER_CHECK(subs.size() == 2, "graph node {} ({}): expected 2 prepared sub-graphs, got {}", index, n.kind, subs.size());
  std::vector<Tensor> out;
  if (n.kind == "cond") {
    EMBER_CHECK(!in.empty(), "graph node {} (cond): missing its predicate", index);
    const size_t k = read_predicate(in[0], "cond: the predicate") ? 0 : 1;
    out = run_sub(n, index, k, subs[k], std::vector<Tensor>(in.begin() + 1, in.end()));
  } else {
    const size_t carried = static_cast<size_t>(n.attr_int("carried"));
    EMBER_CHECK(carried >= 1 && carried <= in.size(), "graph node {} (while_loop): carried = {} with {} inputs", index,
                carried, in.size());
    std::vector<Tensor> args = in;  // [carried..., captures...]; the captures stay
    for (;;) {
      std::vector<Tensor> p = run_sub(n, index, 0, subs[0], args);
      if (!read_predicate(p.at(0), "while_loop: the value of cond")) break;
      std::vector<Tensor> next = run_sub(n, index, 1, subs[1], args);
      EMBER_CHECK(next.size() == carried, "graph node {} (while_loop): its body returned {} values for {} carried",
                  index, next.size(), carried);
      std::move(next.begin(), next.end(), args.begin());
    }
    out.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(carried));
  }
  unalias(out, in);
  return out;
}

}  // namespace ember::jit

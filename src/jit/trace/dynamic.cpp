// Note [dynamic dims]: C++ code computes sizes with plain integers, so one
// trace cannot tell a size that follows the batch from a constant. jit::trace
// therefore traces at the example sizes and at probe sizes of each dynamic dim
// (the corners of {n, n±1} per symbol, and one more point as a check), with
// inputs cut or repeated along those dims. The graphs must be identical but
// for integers (shapes, view sizes/strides/offsets, reduction geometry); each
// such integer is fitted as a sum of integer multiples of products of the
// symbols ("72*batch", "8*batch*seq"), which covers flatten, transposes and
// offsets of selects. The check point rejects anything that is not of that
// form. The sub-graphs of control-flow nodes are fitted the same way, so
// their shapes may follow the symbols too. What cannot be symbolic fails the
// trace by name:
//  - a graph that changes structure (a loop over a dynamic dim: the RNN's
//    steps; jit::while_loop records such a loop once);
//  - a non-integer attribute that changes, except a reduction's 1/n (a mean
//    over a dynamic dim), kept as "1/<n's expression>";
//  - a constant that changes, except constants of one repeated value (zeros,
//    ones, full), which become fill nodes, and progressions (arange over a
//    dynamic dim), which become arange nodes;
//  - a view whose size is the traced value of a symbol, fixed, although its
//    input follows that symbol: the forward baked a traced size into a
//    constant (PyTorch's most reported tracing bug), a tracing error here.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "ember/core/grad_mode.h"
#include "ember/jit/trace.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "jit/ir/arange.h"
#include "jit/trace/trace_fixed.h"

namespace ember::jit {

namespace {

std::string point_str(const SymbolValues& p) {
  std::vector<std::string> s;
  for (const auto& [k, v] : p) s.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{}", fmt::join(s, ", "));
}

// Fits values[p] = sum over symbol subsets S of c_S * prod_{s in S} points[p][s]
// with integer c_S from the 2^k corner points; the remaining points check it.
SymExpr fit(const std::vector<std::string>& names, const std::vector<SymbolValues>& points,
            const std::vector<int64_t>& values, const std::function<std::string()>& what) {
  const size_t k = names.size(), m = size_t{1} << k;
  std::vector<std::vector<double>> a(m, std::vector<double>(m + 1));
  for (size_t p = 0; p < m; ++p) {
    for (size_t s = 0; s < m; ++s) {
      double prod = 1;
      for (size_t i = 0; i < k; ++i)
        if (s >> i & 1) prod *= static_cast<double>(points[p].at(names[i]));
      a[p][s] = prod;
    }
    a[p][m] = static_cast<double>(values[p]);
  }
  for (size_t col = 0; col < m; ++col) {  // Gaussian elimination, partial pivoting
    size_t piv = col;
    for (size_t r = col + 1; r < m; ++r)
      if (std::abs(a[r][col]) > std::abs(a[piv][col])) piv = r;
    std::swap(a[col], a[piv]);
    for (size_t r = 0; r < m; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c <= m; ++c) a[r][c] -= f * a[col][c];
    }
  }
  SymExpr e;
  for (size_t s = 0; s < m; ++s) {
    const double c = std::round(a[s][m] / a[s][s]);
    if (c == 0) continue;
    SymExpr::Term t;
    t.coef = static_cast<int64_t>(c);
    for (size_t i = 0; i < k; ++i)
      if (s >> i & 1) t.symbols.push_back(names[i]);
    std::sort(t.symbols.begin(), t.symbols.end());
    e.terms.push_back(std::move(t));
  }
  for (size_t p = 0; p < points.size(); ++p)
    if (e.eval(points[p]) != values[p]) {
      std::vector<std::string> seen;
      for (size_t q = 0; q < points.size(); ++q) seen.push_back(fmt::format("{} at {}", values[q], point_str(points[q])));
      throw TracingError(fmt::format("trace: {} follows the dynamic dims in a way a graph cannot express (not a sum "
                                     "of integer multiples of products of them): {}",
                                     what(), fmt::join(seen, "; ")));
    }
  return e;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes().equals(b.sizes()) &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), static_cast<size_t>(a.nbytes())) == 0;
}

// The single value every element of t holds, if there is one.
std::optional<Scalar> uniform_value(const Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  Tensor c = t.contiguous();
  const size_t es = c.element_size();
  const char* p = static_cast<const char*>(c.data_ptr());
  for (int64_t i = 1; i < c.numel(); ++i)
    if (std::memcmp(p, p + static_cast<size_t>(i) * es, es) != 0) return std::nullopt;
  return c.reshape({-1}).narrow(0, 0, 1).reshape({}).item();
}

bool mentions(const TensorType& t, const std::string& symbol) {
  for (const Dim& d : t.shape)
    if (d.is_symbolic())
      for (const SymExpr::Term& term : SymExpr::parse(d.symbol).terms)
        if (std::find(term.symbols.begin(), term.symbols.end(), symbol) != term.symbols.end()) return true;
  return false;
}

[[noreturn]] void changes(const std::vector<SymbolValues>& points, size_t p, const std::string& what) {
  throw TracingError(fmt::format(
      "trace: {} changes with the dynamic dims ({} vs {}): the forward depends on those sizes beyond the shapes "
      "(a loop over them, a size-dependent branch or value, a size read once and passed as a constant); keep the dim "
      "fixed, or express it with tensor ops (a loop over a dim: jit::while_loop)",
      what, point_str(points[0]), point_str(points[p])));
}

// The probe graphs have one structure: nodes, values' dtypes and ranks, constants.
void check_same_structure(const std::vector<const Graph*>& graphs, const std::vector<SymbolValues>& points,
                          const std::string& where) {
  const Graph& g0 = *graphs[0];
  for (size_t p = 1; p < graphs.size(); ++p) {
    const Graph& g = *graphs[p];
    if (g.values.size() != g0.values.size() || g.nodes.size() != g0.nodes.size() ||
        g.constants.size() != g0.constants.size() || g.inputs.size() != g0.inputs.size() ||
        g.outputs.size() != g0.outputs.size())
      changes(points, p, fmt::format("{}the graph ({} vs {} nodes)", where, g0.nodes.size(), g.nodes.size()));
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node &a = g0.nodes[i], &b = g.nodes[i];
      if (a.kind != b.kind || a.inputs != b.inputs || a.outputs != b.outputs || a.attrs.size() != b.attrs.size() ||
          a.subgraphs.size() != b.subgraphs.size())
        changes(points, p, fmt::format("{}node {} ({} vs {})", where, i, a.kind, b.kind));
    }
    for (size_t i = 0; i < g.values.size(); ++i)
      if (g.values[i].type.dtype != g0.values[i].type.dtype ||
          g.values[i].type.shape.size() != g0.values[i].type.shape.size())
        changes(points, p, fmt::format("{}the type of value %{}", where, i));
    for (size_t i = 0; i < g.constants.size(); ++i)
      if (g.constants[i].name != g0.constants[i].name || g.constants[i].value != g0.constants[i].value)
        changes(points, p, fmt::format("{}constant {}", where, g0.constants[i].name));
  }
}

// A reduction's scale that is 1/reduce at every point (a mean over a dynamic
// dim): "1/<reduce's expression>", which Graph::resolve evaluates as the op
// does; nullopt when the attribute is not such a scale or does not change.
std::optional<std::string> reciprocal_of_reduce(const std::vector<const Graph*>& graphs, size_t i, size_t a,
                                                const std::vector<SymbolValues>& points,
                                                const std::vector<std::string>& names,
                                                const std::function<std::string()>& label) {
  const Node& n0 = graphs[0]->nodes[i];
  if (n0.attrs[a].name != "scale" || !std::holds_alternative<double>(n0.attrs[a].value) || !n0.find("reduce"))
    return std::nullopt;
  std::vector<int64_t> reduce;
  bool changed = false;
  for (size_t p = 0; p < graphs.size(); ++p) {
    const Node& n = graphs[p]->nodes[i];
    const int64_t r = n.attr_int("reduce");
    if (r <= 0 || std::get<double>(n.attrs[a].value) != 1.0 / static_cast<double>(r)) return std::nullopt;
    reduce.push_back(r);
    changed = changed || r != reduce[0];
  }
  if (!changed) return std::nullopt;
  return "1/" + fit(names, points, reduce, label).str();
}

// Node i's attributes in `out`: integers fitted to the symbols, others the same at every point.
void fit_attrs(Graph& out, size_t i, const std::vector<const Graph*>& graphs, const std::vector<SymbolValues>& points,
               const std::vector<std::string>& names, const std::string& where) {
  Node& n = out.nodes[i];
  for (size_t a = 0; a < n.attrs.size(); ++a) {
    const Attr& attr = n.attrs[a];
    auto label = [&] { return fmt::format("{}attribute '{}' of node {} ({})", where, attr.name, i, n.kind); };
    auto attr_at = [&](size_t p) -> const Attr& { return graphs[p]->nodes[i].attrs[a]; };
    for (size_t p = 1; p < graphs.size(); ++p)
      if (attr_at(p).name != attr.name || attr_at(p).value.index() != attr.value.index()) changes(points, p, label());
    if (std::holds_alternative<int64_t>(attr.value)) {
      std::vector<int64_t> vals;
      for (size_t p = 0; p < graphs.size(); ++p) vals.push_back(std::get<int64_t>(attr_at(p).value));
      SymExpr e = fit(names, points, vals, label);
      if (!e.is_constant()) n.sym_attrs.push_back({attr.name, {e.str()}});
    } else if (const auto* list = std::get_if<std::vector<int64_t>>(&attr.value)) {
      std::vector<std::string> exprs;
      bool symbolic = false;
      for (size_t j = 0; j < list->size(); ++j) {
        std::vector<int64_t> vals;
        for (size_t p = 0; p < graphs.size(); ++p) {
          const auto& l = std::get<std::vector<int64_t>>(attr_at(p).value);
          if (l.size() != list->size()) changes(points, p, label());
          vals.push_back(l[j]);
        }
        SymExpr e = fit(names, points, vals, label);
        symbolic = symbolic || !e.is_constant();
        exprs.push_back(e.is_constant() ? std::to_string((*list)[j]) : e.str());
      }
      if (symbolic) n.sym_attrs.push_back({attr.name, exprs});
    } else if (std::optional<std::string> r = reciprocal_of_reduce(graphs, i, a, points, names, label)) {
      n.sym_attrs.push_back({attr.name, {*r}});
    } else {
      for (size_t p = 1; p < graphs.size(); ++p)
        if (attr_str(attr_at(p).value) != attr_str(attr.value))
          changes(points, p, fmt::format("{} (a real value that follows the dims: only a reduction's 1/size can)",
                                         label()));
    }
  }
}

// `out` (a copy of graphs[0]) with its shapes and integer attributes fitted
// to the symbols; sub-graphs likewise, recursively. `where` prefixes labels.
void fit_graph(Graph& out, const std::vector<const Graph*>& graphs, const std::vector<SymbolValues>& points,
               const std::vector<std::string>& names, const std::string& where) {
  check_same_structure(graphs, points, where);
  for (size_t v = 0; v < out.values.size(); ++v)
    for (size_t d = 0; d < out.values[v].type.shape.size(); ++d) {
      std::vector<int64_t> sizes;
      for (const Graph* g : graphs) sizes.push_back(g->values[v].type.shape[d].size);
      SymExpr e = fit(names, points, sizes, [&] { return fmt::format("{}dim {} of value %{}", where, d, v); });
      if (!e.is_constant()) out.values[v].type.shape[d].symbol = e.str();
    }
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    fit_attrs(out, i, graphs, points, names, where);
    Node& n = out.nodes[i];
    const std::vector<std::string> sub_names = subgraph_names(n.kind);
    for (size_t k = 0; k < n.subgraphs.size(); ++k) {
      std::vector<const Graph*> subs;
      for (const Graph* g : graphs) subs.push_back(g->nodes[i].subgraphs[k].get());
      Graph sub = *subs[0];
      fit_graph(sub, subs, points, names,
                fmt::format("{}node {} ({}) sub-graph '{}': ", where, i, n.kind, k < sub_names.size() ? sub_names[k] : "?"));
      n.subgraphs[k] = std::make_shared<const Graph>(std::move(sub));
    }
  }
}

// Constant c as start + i * step at every point, its length following the
// dims (arange over a dynamic dim, positions 0..seq-1): an "arange" node.
std::optional<Node> arange_node(const std::vector<Graph>& graphs, size_t c, int value) {
  const Tensor& d0 = graphs[0].constants[c].data;
  if (d0.dim() != 1 || d0.numel() < 2 || (!is_integral(d0.dtype(), false) && !is_floating_point(d0.dtype())))
    return std::nullopt;
  const bool integral = is_integral(d0.dtype(), false);
  const Tensor head = d0.narrow(0, 0, 2).to(integral ? kInt64 : kFloat64);
  Scalar start, step;
  if (integral) {
    const std::vector<int64_t> v = head.to_vector<int64_t>();
    start = Scalar(v[0]), step = Scalar(v[1] - v[0]);
  } else {
    const std::vector<double> v = head.to_vector<double>();
    start = Scalar(v[0]), step = Scalar(v[1] - v[0]);
  }
  for (const Graph& g : graphs) {
    const Tensor& d = g.constants[c].data;
    if (d.dim() != 1 || d.dtype() != d0.dtype()) return std::nullopt;
    Tensor want = empty({d.numel()}, TensorOptions(d.dtype()));
    write_arange(want, start, step);
    if (!same_bytes(want, d)) return std::nullopt;
  }
  Node n;
  n.kind = "arange";
  n.outputs = {value};
  n.attrs = {{"start", start}, {"step", step}};
  return n;
}

// Constants: fixed, one repeated value over a symbolic shape (a fill node),
// or a progression of symbolic length (an arange node).
void fill_constants(Graph& out, const std::vector<Graph>& graphs) {
  std::vector<Constant> kept;
  std::vector<Node> fills;
  for (size_t c = 0; c < out.constants.size(); ++c) {
    const Constant& k = out.constants[c];
    bool same_shape = true, same_data = true;
    for (size_t p = 1; p < graphs.size(); ++p) {
      const Tensor& d = graphs[p].constants[c].data;
      same_shape = same_shape && d.sizes().equals(k.data.sizes());
      same_data = same_data && same_shape && same_bytes(d, k.data);
    }
    if (same_data) {
      kept.push_back(k);
      continue;
    }
    std::optional<Scalar> v = uniform_value(k.data);
    bool uniform = v.has_value() && !same_shape;
    for (size_t p = 1; uniform && p < graphs.size(); ++p) {
      std::optional<Scalar> w = uniform_value(graphs[p].constants[c].data);
      uniform = w && attr_str(*w) == attr_str(*v);
    }
    if (!uniform) {
      if (std::optional<Node> a = arange_node(graphs, c, k.value)) {
        fills.push_back(std::move(*a));
        continue;
      }
      throw TracingError(fmt::format(
          "trace: constant '{}' {} depends on the dynamic dims (a tensor the forward built from their sizes, such as "
          "arange over one); make it an input, or keep that dim fixed",
          k.name, out.type(k.value).str()));
    }
    Node f;
    f.kind = "fill";
    f.outputs = {k.value};
    f.attrs = {{"a", *v}};
    fills.push_back(std::move(f));
  }
  out.constants = kept;
  out.nodes.insert(out.nodes.begin(), fills.begin(), fills.end());
}

// A view that fixes a size to a symbol's traced value although its input follows the symbol.
void check_baked_views(const Graph& out, const SymbolValues& base, const std::string& where) {
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    const Node& n = out.nodes[i];
    const std::vector<std::string> sub_names = subgraph_names(n.kind);
    for (size_t k = 0; k < n.subgraphs.size(); ++k)
      check_baked_views(*n.subgraphs[k], base,
                        fmt::format("{}node {} ({}) sub-graph '{}': ", where, i, n.kind, k < sub_names.size() ? sub_names[k] : "?"));
    if (n.kind != "as_strided") continue;
    std::vector<int64_t> sizes = n.attr_ints("sizes");
    std::vector<std::string> exprs(sizes.size());
    for (const Node::SymAttr& sa : n.sym_attrs)
      if (sa.name == "sizes") exprs = sa.exprs;
    const TensorType& in = out.type(n.inputs[0]);
    for (const auto& [symbol, value] : base) {
      if (!mentions(in, symbol)) continue;
      int64_t fixed_out = 0, fixed_in = 0;
      for (size_t j = 0; j < sizes.size(); ++j)
        if (sizes[j] == value && (exprs[j].empty() || SymExpr::parse(exprs[j]).is_constant())) ++fixed_out;
      for (const Dim& d : in.shape)
        if (!d.is_symbolic() && d.size == value) ++fixed_in;
      if (fixed_out > fixed_in)
        throw TracingError(fmt::format(
            "trace: {}a view (node {}{}) fixes a size to {}, the traced value of dynamic dim '{}', although its "
            "input {} follows '{}': the forward passed a size it read once as a constant (e.g. view({{{}, -1}})); "
            "compute it from the tensor (x.size(0)), or if the size really is fixed, trace with another example "
            "size",
            where, i, n.scope.empty() ? "" : fmt::format(", in {}", n.scope), value, symbol, in.str(), symbol,
            value));
    }
  }
}

Graph combine(const std::vector<Graph>& graphs, const std::vector<SymbolValues>& points,
              const std::vector<std::string>& names) {
  Graph out = graphs[0];
  std::vector<const Graph*> all;
  for (const Graph& g : graphs) all.push_back(&g);
  fit_graph(out, all, points, names, "");
  fill_constants(out, graphs);
  check_baked_views(out, points[0], "");
  return out;
}

}  // namespace

Tensor resize_dim(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t have = x.size(dim);
  if (n <= have) return x.narrow(dim, 0, n).contiguous();
  std::vector<Tensor> copies(static_cast<size_t>((n + have - 1) / have), x);
  return cat(copies, dim).narrow(dim, 0, n).contiguous();
}

Graph trace(nn::Module& module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
            const TraceOptions& options) {
  if (options.dynamic_dims.empty()) return trace_fixed(module, fn, example_inputs, options);
  SymbolValues base;
  std::vector<std::string> names;
  for (const DynamicDim& d : options.dynamic_dims) {
    EMBER_CHECK(d.input < example_inputs.size(), "trace: dynamic dim '{}' names input {}, but there are {} inputs",
                d.name, d.input, example_inputs.size());
    const Tensor& x = example_inputs[d.input];
    EMBER_CHECK(x.defined() && d.dim >= 0 && d.dim < x.dim(), "trace: dynamic dim '{}': input {} has no dim {}",
                d.name, d.input, d.dim);
    EMBER_CHECK(!d.name.empty() && std::isalpha(static_cast<unsigned char>(d.name[0])) &&
                    std::all_of(d.name.begin(), d.name.end(),
                                [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }),
                "trace: dynamic dim name '{}' must be an identifier (letters, digits, _)", d.name);
    const int64_t n = x.size(d.dim);
    EMBER_CHECK(n >= 2, "trace: dynamic dim '{}' needs an example size of at least 2 (input {} dim {} is {}): size "
                "1 dims broadcast, so they cannot show how the graph follows the size",
                d.name, d.input, d.dim, n);
    auto [it, fresh] = base.emplace(d.name, n);
    EMBER_CHECK(fresh || it->second == n, "trace: dynamic dim '{}' is {} on one input and {} on another", d.name,
                it->second, n);
    if (fresh) names.push_back(d.name);
  }
  EMBER_CHECK(names.size() <= 3, "trace: at most 3 distinct dynamic dims, got {}", names.size());
  std::vector<SymbolValues> points;
  for (size_t mask = 0; mask < (size_t{1} << names.size()); ++mask) {
    SymbolValues p = base;
    for (size_t i = 0; i < names.size(); ++i) {
      const int64_t n = base[names[i]];
      if (mask >> i & 1) p[names[i]] = n <= 3 ? n + 1 : n - 1;
    }
    points.push_back(p);
  }
  SymbolValues check = base;
  for (auto& [name, v] : check) v = v <= 4 ? v + 2 : v - 2;
  points.push_back(check);

  std::vector<Graph> graphs;
  for (size_t p = 0; p < points.size(); ++p) {
    std::vector<Tensor> inputs = example_inputs;
    {
      NoGradGuard no_grad;
      for (const DynamicDim& d : options.dynamic_dims)
        inputs[d.input] = resize_dim(inputs[d.input], d.dim, points[p].at(d.name));
    }
    TraceOptions o = options;
    o.dynamic_dims.clear();
    if (p > 0) o.warn = [](const std::string&) {};  // the example trace already warned
    if (p == 0) {
      graphs.push_back(trace_fixed(module, fn, inputs, o));
      continue;
    }
    try {
      graphs.push_back(trace_fixed(module, fn, inputs, o));
    } catch (const TracingError&) {
      throw;
    } catch (const Error& e) {
      throw TracingError(fmt::format(
          "trace: the forward fails at {} (a probe size for the dynamic dims; the example is {}): {}. A size read "
          "once and passed as a constant (view({{B, -1}})) breaks at other sizes: compute it from the tensor "
          "(x.size(0))",
          point_str(points[p]), point_str(points[0]), e.what()));
    }
  }
  Graph g = combine(graphs, points, names);
  check_graph(g, "trace");
  return g;
}

}  // namespace ember::jit

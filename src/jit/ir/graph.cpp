// Note [jit graph]: a Graph is the list of kernels a traced forward ran, in
// order, over SSA values. A node's kind is the ops.def row of the kernel (its
// inputs are exactly the tensors that kernel read, already cast and made
// contiguous by earlier nodes where the op needed it), or "as_strided" for a
// view (sizes, strides and the storage offset relative to its base), so
// replaying the nodes reproduces eager results bit for bit. Constants are the
// tensors the forward read that no input produced: parameters and buffers by
// module path, everything else inline ("constant.N").
#include "ember/jit/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/op_registry.h"
#include "jit/ir/control_flow.h"

namespace ember::jit {

std::vector<int64_t> TensorType::sizes() const {
  std::vector<int64_t> s;
  s.reserve(shape.size());
  for (const Dim& d : shape) s.push_back(d.size);
  return s;
}

TensorType TensorType::of(const Tensor& t) {
  TensorType ty;
  ty.dtype = t.dtype();
  for (int64_t s : t.sizes()) ty.shape.push_back({s, {}});
  return ty;
}

std::string TensorType::str() const {
  std::vector<std::string> dims;
  for (const Dim& d : shape) dims.push_back(d.is_symbolic() ? fmt::format("{}={}", d.symbol, d.size) : fmt::format("{}", d.size));
  return fmt::format("{}[{}]", to_string(dtype), fmt::join(dims, ", "));
}

std::string attr_str(const AttrValue& v) {
  struct V {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return fmt::format("{}", i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const Scalar& s) const {
      return s.is_floating_point() ? fmt::format("{}", s.to_double())
             : s.is_bool()         ? std::string(s.to_bool() ? "true" : "false")
                                   : fmt::format("{}", s.to_long());
    }
    std::string operator()(ScalarType t) const { return std::string(to_string(t)); }
    std::string operator()(const std::vector<int64_t>& l) const { return fmt::format("[{}]", fmt::join(l, ", ")); }
    std::string operator()(const std::string& s) const { return fmt::format("\"{}\"", s); }
  };
  return std::visit(V{}, v);
}

// ---- symbolic sizes ----

namespace {
bool is_symbol_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

SymExpr SymExpr::parse(const std::string& text) {
  SymExpr e;
  auto bad = [&](const char* why) -> SymExpr {
    EMBER_ERROR("symbolic size '{}': {} (expected terms like 2*batch*seq joined by ' + ')", text, why);
  };
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  if (i == text.size()) return bad("empty");
  while (i < text.size()) {
    Term t;
    t.coef = 1;
    bool have_coef = false;
    for (bool first = true;; first = false) {
      skip();
      if (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '-')) {
        if (have_coef || !first) return bad("a number inside a product");
        size_t used = 0;
        try {
          t.coef = std::stoll(text.substr(i), &used);
        } catch (const std::exception&) {
          return bad("a coefficient out of range");
        }
        i += used;
        have_coef = true;
      } else if (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
        size_t j = i;
        while (j < text.size() && is_symbol_char(text[j])) ++j;
        t.symbols.push_back(text.substr(i, j - i));
        i = j;
      } else {
        return bad("expected a number or a symbol");
      }
      skip();
      if (i < text.size() && text[i] == '*') {
        ++i;
        continue;
      }
      break;
    }
    std::sort(t.symbols.begin(), t.symbols.end());
    e.terms.push_back(std::move(t));
    skip();
    if (i == text.size()) break;
    if (text[i] != '+') return bad("expected '+'");
    ++i;
  }
  return e;
}

std::string SymExpr::str() const {
  std::vector<std::string> parts;
  for (const Term& t : terms) {
    std::vector<std::string> f;
    if (t.coef != 1 || t.symbols.empty()) f.push_back(fmt::format("{}", t.coef));
    for (const std::string& s : t.symbols) f.push_back(s);
    parts.push_back(fmt::format("{}", fmt::join(f, "*")));
  }
  return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, " + "));
}

bool SymExpr::is_constant() const {
  for (const Term& t : terms)
    if (!t.symbols.empty() && t.coef != 0) return false;
  return true;
}

int64_t SymExpr::eval(const SymbolValues& symbols) const {
  int64_t total = 0;
  for (const Term& t : terms) {
    int64_t v = t.coef;
    for (const std::string& s : t.symbols) {
      auto it = symbols.find(s);
      EMBER_CHECK(it != symbols.end(), "symbolic size '{}': no value for '{}'", str(), s);
      EMBER_CHECK(!__builtin_mul_overflow(v, it->second, &v), "symbolic size '{}' overflows int64", str());
    }
    EMBER_CHECK(!__builtin_add_overflow(total, v, &total), "symbolic size '{}' overflows int64", str());
  }
  return total;
}

// ---- Node attributes ----

const AttrValue* Node::find(const std::string& name) const {
  for (const Attr& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}

namespace {
template <typename T>
const T& typed_attr(const Node& n, const std::string& name, const char* type) {
  const AttrValue* v = n.find(name);
  EMBER_CHECK(v, "{} node: missing attribute '{}'", n.kind, name);
  const T* t = std::get_if<T>(v);
  EMBER_CHECK(t, "{} node: attribute '{}' must be {}, got {}", n.kind, name, type, attr_str(*v));
  return *t;
}
}  // namespace

int64_t Node::attr_int(const std::string& name) const { return typed_attr<int64_t>(*this, name, "an integer"); }
double Node::attr_double(const std::string& name) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<int64_t>(*v)) return static_cast<double>(std::get<int64_t>(*v));
  return typed_attr<double>(*this, name, "a number");
}
bool Node::attr_bool(const std::string& name) const { return typed_attr<bool>(*this, name, "a bool"); }
Scalar Node::attr_scalar(const std::string& name) const { return typed_attr<Scalar>(*this, name, "a scalar"); }
std::optional<Scalar> Node::attr_scalar_opt(const std::string& name) const {
  if (!find(name)) return std::nullopt;
  return attr_scalar(name);
}
ScalarType Node::attr_dtype(const std::string& name) const { return typed_attr<ScalarType>(*this, name, "a dtype"); }
std::vector<int64_t> Node::attr_ints(const std::string& name) const {
  return typed_attr<std::vector<int64_t>>(*this, name, "a list of integers");
}

// ---- Graph ----

int Graph::add_value(TensorType type) {
  values.push_back({std::move(type)});
  return static_cast<int>(values.size()) - 1;
}

std::vector<int64_t> Graph::sizes(int value, const SymbolValues& symbols) const {
  const TensorType& t = type(value);
  std::vector<int64_t> s;
  s.reserve(t.shape.size());
  for (const Dim& d : t.shape) {
    if (!d.is_symbolic() || symbols.empty()) {
      s.push_back(d.size);
      continue;
    }
    const int64_t v = SymExpr::parse(d.symbol).eval(symbols);
    EMBER_CHECK(v >= 0, "symbolic size '{}' is negative ({}) for these inputs", d.symbol, v);
    s.push_back(v);
  }
  return s;
}

Node Graph::resolve(const Node& n, const SymbolValues& symbols) {
  Node r = n;
  for (const Node::SymAttr& sa : n.sym_attrs) {
    for (Attr& a : r.attrs) {
      if (a.name != sa.name) continue;
      if (std::holds_alternative<double>(a.value)) {
        // "1/<expr>": a mean's scale over a dynamic dim, computed as the eager op does.
        EMBER_CHECK(sa.exprs.size() == 1 && sa.exprs[0].starts_with("1/"),
                    "{} node: symbolic attribute '{}' of a real value must be one '1/<size>' expression", n.kind,
                    sa.name);
        const int64_t d = SymExpr::parse(sa.exprs[0].substr(2)).eval(symbols);
        EMBER_CHECK(d > 0, "{} node: symbolic attribute '{}' = {} divides by {}", n.kind, sa.name, sa.exprs[0], d);
        a.value = 1.0 / static_cast<double>(d);
        continue;
      }
      std::vector<int64_t> v;
      for (const std::string& e : sa.exprs) v.push_back(SymExpr::parse(e).eval(symbols));
      if (std::holds_alternative<int64_t>(a.value)) {
        EMBER_CHECK(v.size() == 1, "{} node: symbolic attribute '{}' needs one expression", n.kind, sa.name);
        a.value = v[0];
      } else {
        EMBER_CHECK(std::holds_alternative<std::vector<int64_t>>(a.value) &&
                        std::get<std::vector<int64_t>>(a.value).size() == v.size(),
                    "{} node: symbolic attribute '{}' does not match its integer list", n.kind, sa.name);
        a.value = v;
      }
    }
  }
  return r;
}

std::vector<std::pair<std::string, int64_t>> Graph::op_counts() const {
  std::map<std::string, int64_t> m;
  for (const Node& n : nodes) ++m[n.kind];
  return {m.begin(), m.end()};
}

namespace {
// A control-flow node's sub-graphs, indented under it.
std::string subgraphs_str(const Node& n) {
  std::string s;
  const std::vector<std::string> names = subgraph_names(n.kind);
  for (size_t k = 0; k < n.subgraphs.size(); ++k) {
    s += fmt::format("  {} {{\n", k < names.size() ? names[k] : fmt::format("sub-graph {}", k));
    const std::string body = n.subgraphs[k] ? n.subgraphs[k]->str() : std::string("(null)\n");
    for (size_t at = 0; at < body.size();) {
      const size_t eol = body.find('\n', at);
      const size_t end = eol == std::string::npos ? body.size() : eol + 1;
      s += "    " + body.substr(at, end - at);
      at = end;
    }
    s += "  }\n";
  }
  return s;
}
}  // namespace

std::string Graph::str() const {
  std::string s;
  auto vname = [](int v) { return v == kNoValue ? std::string("_") : fmt::format("%{}", v); };
  for (const NamedValue& in : inputs) s += fmt::format("input {} = {}: {}\n", in.name, vname(in.value), type(in.value).str());
  for (const Constant& c : constants)
    s += fmt::format("constant {} = {}: {}\n", c.name, vname(c.value), type(c.value).str());
  for (const Node& n : nodes) {
    std::vector<std::string> outs, ins, attrs;
    for (int o : n.outputs) outs.push_back(o == kNoValue ? "_" : fmt::format("{}: {}", vname(o), type(o).str()));
    for (int i : n.inputs) ins.push_back(vname(i));
    for (const Attr& a : n.attrs) {
      std::string v = attr_str(a.value);
      for (const Node::SymAttr& sa : n.sym_attrs)
        if (sa.name == a.name) v = sa.exprs.size() == 1 && std::holds_alternative<int64_t>(a.value)
                                       ? sa.exprs[0]
                                       : fmt::format("[{}]", fmt::join(sa.exprs, ", "));
      attrs.push_back(fmt::format("{}={}", a.name, v));
    }
    s += fmt::format("{} = {}({}){}{}\n", fmt::join(outs, ", "), n.kind, fmt::join(ins, ", "),
                     attrs.empty() ? "" : fmt::format(" {{{}}}", fmt::join(attrs, ", ")),
                     n.scope.empty() ? "" : fmt::format("  # {}", n.scope));
    s += subgraphs_str(n);
  }
  for (const NamedValue& out : outputs) s += fmt::format("output {} = {}\n", out.name, vname(out.value));
  return s;
}

bool is_static_int8_kind(const std::string& kind) {
  return kind == "quantize_static" || kind == "conv2d_int8" || kind == "linear_int8";
}

bool is_known_kind(const std::string& kind) {
  static const std::set<std::string> kinds = [] {
    std::set<std::string> k{"as_strided",         "cond",           "while_loop",  "rnn_layer",  "arange",
                            "linear_dynamic_int8", "rnn_layer_dynamic_int8", "quantize_static", "conv2d_int8", "linear_int8",
                            "fused_elementwise"};
    for (int i = 0; i < kNumOps; ++i) k.insert(std::string(op_name(static_cast<Op>(i))));
    return k;
  }();
  return kinds.count(kind) > 0;
}

namespace {
// A size expression, or "1/<size>" (a real attribute's reciprocal, Graph::resolve).
void parse_in(const std::string& expr, const std::string& what, bool reciprocal_ok = false) {
  try {
    SymExpr::parse(reciprocal_ok && expr.starts_with("1/") ? expr.substr(2) : expr);
  } catch (const Error& e) {
    EMBER_ERROR("{}: {}", what, e.what());
  }
}
}  // namespace

void check_graph(const Graph& g, const std::string& what) {
  const int nv = static_cast<int>(g.values.size());
  std::vector<char> defined(g.values.size(), 0);
  auto in_range = [&](int v, const std::string& where) {
    EMBER_CHECK(v >= 0 && v < nv, "{}: {} refers to value %{}, but the graph has {} values", what, where, v, nv);
  };
  auto define = [&](int v, const std::string& where) {
    in_range(v, where);
    EMBER_CHECK(!defined[static_cast<size_t>(v)], "{}: value %{} is defined twice (again by {})", what, v, where);
    defined[static_cast<size_t>(v)] = 1;
  };
  std::set<std::string> names;
  for (const NamedValue& in : g.inputs) {
    EMBER_CHECK(names.insert(in.name).second, "{}: input name '{}' appears twice", what, in.name);
    define(in.value, fmt::format("input '{}'", in.name));
  }
  for (const Constant& c : g.constants) {
    define(c.value, fmt::format("constant '{}'", c.name));
    EMBER_CHECK(c.data.defined(), "{}: constant '{}' has no data", what, c.name);
    const TensorType& t = g.type(c.value);
    EMBER_CHECK(c.data.dtype() == t.dtype && c.data.sizes().vec() == t.sizes(),
                "{}: constant '{}' holds {} {}, but its value is typed {}", what, c.name, to_string(c.data.dtype()),
                fmt::format("[{}]", fmt::join(c.data.sizes(), ", ")), t.str());
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string where = fmt::format("node {} ({})", i, n.kind);
    EMBER_CHECK(is_known_kind(n.kind), "{}: {}: unknown op '{}'", what, where, n.kind);
    for (int v : n.inputs) {
      if (v == kNoValue) continue;
      in_range(v, where);
      EMBER_CHECK(defined[static_cast<size_t>(v)], "{}: {} reads value %{} before it is defined", what, where, v);
    }
    for (int v : n.outputs)
      if (v != kNoValue) define(v, where);
    for (const Node::SymAttr& sa : n.sym_attrs) {
      EMBER_CHECK(n.find(sa.name), "{}: {}: symbolic attribute '{}' has no traced value", what, where, sa.name);
      for (const std::string& e : sa.exprs) parse_in(e, what, true);
    }
    check_control_flow(g, n, fmt::format("{}: {}", what, where));
  }
  for (const Value& v : g.values)
    for (const Dim& d : v.type.shape)
      if (d.is_symbolic()) parse_in(d.symbol, what);
  names.clear();
  for (const NamedValue& out : g.outputs) {
    EMBER_CHECK(names.insert(out.name).second, "{}: output name '{}' appears twice", what, out.name);
    in_range(out.value, fmt::format("output '{}'", out.name));
    EMBER_CHECK(defined[static_cast<size_t>(out.value)], "{}: output '{}' (value %{}) is never defined", what,
                out.name, out.value);
  }
}

}  // namespace ember::jit

#include "ember/jit/passes/identity.h"

#include <optional>

#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

namespace {

// A value's layout where it is known for every binding of the symbols: node
// outputs, inputs and constants are contiguous (the interpreter makes them
// so); a view's layout is its attributes. A stride that depends on a symbol
// is unknown.
struct Layout {
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

std::optional<Layout> contiguous_layout(const TensorType& t) {
  Layout l;
  l.strides.resize(t.shape.size());
  int64_t s = 1;
  bool fixed = true;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (!fixed) return std::nullopt;
    l.strides[i] = s;
    s *= t.shape[i].size;
    fixed = !t.shape[i].is_symbolic();
  }
  return l;
}

const Node::SymAttr* sym(const Node& n, const char* name) {
  for (const Node::SymAttr& s : n.sym_attrs)
    if (s.name == name) return &s;
  return nullptr;
}

// The view's sizes equal its base's dims for every binding.
bool same_sizes(const Node& n, const TensorType& base) {
  const std::vector<int64_t> sizes = n.attr_ints("sizes");
  if (sizes.size() != base.shape.size()) return false;
  const Node::SymAttr* s = sym(n, "sizes");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string e = s && i < s->exprs.size() ? s->exprs[i] : std::to_string(sizes[i]);
    if (sizes[i] != base.shape[i].size || e != passes_detail::dim_expr(base.shape[i])) return false;
  }
  return true;
}

}  // namespace

Graph remove_identities(const Graph& in) {
  Graph g = in;
  std::vector<std::optional<Layout>> layout(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) layout[v] = contiguous_layout(g.values[v].type);
  std::vector<int> subst(g.values.size(), kNoValue);
  auto base_of = [&](int v) {
    while (subst[static_cast<size_t>(v)] != kNoValue) v = subst[static_cast<size_t>(v)];
    return v;
  };
  for (const Node& n : g.nodes) {
    if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] == kNoValue || n.outputs[0] == kNoValue) continue;
    const int x = base_of(n.inputs[0]), y = n.outputs[0];
    const std::optional<Layout>& lx = layout[static_cast<size_t>(x)];
    if (n.kind == "as_strided") {
      // Views' outputs: their own layout, known when nothing in it is symbolic.
      const bool fixed_geometry = !sym(n, "strides") && !sym(n, "offset");
      layout[static_cast<size_t>(y)].reset();
      if (fixed_geometry && lx) layout[static_cast<size_t>(y)] = Layout{n.attr_ints("strides"), lx->offset + n.attr_int("offset")};
      if (fixed_geometry && lx && g.type(x).dtype == g.type(y).dtype && same_sizes(n, g.type(x)) &&
          n.attr_ints("strides") == lx->strides && n.attr_int("offset") == 0)
        subst[static_cast<size_t>(y)] = x;
    } else if (n.kind == "copy") {
      // Only a copy of a contiguous value: kernels such as conv need that layout.
      const std::optional<Layout> want = contiguous_layout(g.type(x));
      if (lx && want && lx->strides == want->strides && g.type(x) == g.type(y)) subst[static_cast<size_t>(y)] = x;
    }
  }
  passes_detail::substitute(g, subst);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

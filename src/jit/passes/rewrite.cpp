#include "rewrite.h"

#include <set>
#include <variant>

namespace ember::jit::passes_detail {

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (int v : n.inputs)
      if (v != kNoValue) ++uses[static_cast<size_t>(v)];
  for (const NamedValue& o : g.outputs)
    if (o.value != kNoValue) ++uses[static_cast<size_t>(o.value)];
  return uses;
}

void substitute(Graph& g, const std::vector<int>& subst) {
  auto resolve = [&](int v) {
    // Chains are acyclic: a substitute is always defined before the value it replaces.
    while (v != kNoValue && static_cast<size_t>(v) < subst.size() && subst[static_cast<size_t>(v)] != kNoValue)
      v = subst[static_cast<size_t>(v)];
    return v;
  };
  for (Node& n : g.nodes)
    for (int& v : n.inputs) v = resolve(v);
  for (NamedValue& o : g.outputs) o.value = resolve(o.value);
}

std::vector<int> producers(const Graph& g) {
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].outputs)
      if (v != kNoValue) producer[static_cast<size_t>(v)] = static_cast<int>(i);
  return producer;
}

void drop_nodes(Graph& g, const std::vector<char>& drop) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

std::vector<int> constant_index(const Graph& g) {
  std::vector<int> idx(g.values.size(), -1);
  for (size_t i = 0; i < g.constants.size(); ++i) idx[static_cast<size_t>(g.constants[i].value)] = static_cast<int>(i);
  return idx;
}

std::string dim_expr(const Dim& d) { return d.is_symbolic() ? d.symbol : std::to_string(d.size); }

bool has_symbolic_dim(const TensorType& t) {
  for (const Dim& d : t.shape)
    if (d.is_symbolic()) return true;
  return false;
}

std::string fresh_constant_name(const Graph& g, const std::string& stem) {
  std::set<std::string> names;
  for (const Constant& c : g.constants) names.insert(c.name);
  if (!names.count(stem)) return stem;
  for (int i = 1;; ++i) {
    std::string s = stem + "." + std::to_string(i);
    if (!names.count(s)) return s;
  }
}

WeightRef find_weight(const Graph& g, int v, const std::vector<int>& producer, const std::vector<int>& cidx) {
  if (cidx[static_cast<size_t>(v)] >= 0) return {cidx[static_cast<size_t>(v)], false};
  const int p = producer[static_cast<size_t>(v)];
  if (p < 0) return {};
  const Node& view = g.nodes[static_cast<size_t>(p)];
  if (view.kind != "as_strided" || view.inputs.size() != 1 || view.inputs[0] == kNoValue) return {};
  const int ci = cidx[static_cast<size_t>(view.inputs[0])];
  if (ci < 0) return {};
  const Tensor& w = g.constants[static_cast<size_t>(ci)].data;
  if (!w.defined() || w.dim() != 2 || !view.sym_attrs.empty()) return {};
  const int64_t n = w.size(0), k = w.size(1);
  if (view.attr_ints("sizes") != std::vector<int64_t>{k, n} || view.attr_ints("strides") != std::vector<int64_t>{1, k} ||
      view.attr_int("offset") != 0)
    return {};
  return {ci, true};
}

std::string string_attr(const Node& n, const char* name) {
  const AttrValue* a = n.find(name);
  const std::string* s = a ? std::get_if<std::string>(a) : nullptr;
  return s ? *s : std::string();
}

}  // namespace ember::jit::passes_detail

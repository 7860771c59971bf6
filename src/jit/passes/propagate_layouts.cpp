#include "ember/jit/passes/propagate_layouts.h"

#include <variant>

#include "rewrite.h"

namespace ember::jit {

namespace {

bool has_string(const Node& n, const char* attr, const char* value) { return passes_detail::string_attr(n, attr) == value; }

// A float32 4-D conv2d that a prepared graph may run through a prepared
// oneDNN kernel. As a reader, a conv the interpreter gives to Ember's
// small-c_in kernel (Note [small-c_in convolution]: c_in * kh * kw <= 12 at
// stride and dilation 1, one group) takes NCHW only; as a producer it is
// run by oneDNN when its output stays blocked (W1's first conv: measured
// ~15% less CPU time per batch-256 call for the network with its pool and
// the second conv's input reorder in the blocked layout).
bool is_prepared_conv(const Graph& g, const Node& n, bool as_reader) {
  if (n.kind != "conv2d" || !has_string(n, "kernel", "prepared") || n.inputs.size() < 2 || n.inputs[0] == kNoValue ||
      n.inputs[1] == kNoValue || n.outputs.size() != 1 || n.outputs[0] == kNoValue)
    return false;
  const TensorType& y = g.type(n.outputs[0]);
  const std::vector<int64_t> w = g.type(n.inputs[1]).sizes();
  if (y.dtype != kFloat32 || y.shape.size() != 4 || w.size() != 4) return false;
  const AttrValue* groups = n.find("groups");
  const int64_t* gr = groups ? std::get_if<int64_t>(groups) : nullptr;
  const AttrValue* stride = n.find("stride");
  const AttrValue* dilation = n.find("dilation");
  const auto* st = stride ? std::get_if<std::vector<int64_t>>(stride) : nullptr;
  const auto* di = dilation ? std::get_if<std::vector<int64_t>>(dilation) : nullptr;
  const bool unit = st && di && *st == std::vector<int64_t>{1, 1} && *di == std::vector<int64_t>{1, 1};
  const bool small_cin = gr && *gr == 1 && unit && w[1] * w[2] * w[3] <= 12;
  return !(as_reader && small_cin);
}

}  // namespace

Graph propagate_layouts(const Graph& in) {
  Graph g = in;
  // Per value: whether every reader takes a blocked layout, and whether it has one.
  std::vector<char> blocked_ok(g.values.size(), 1), read(g.values.size(), 0);
  for (const NamedValue& o : g.outputs) blocked_ok[static_cast<size_t>(o.value)] = 0;
  for (const Node& n : g.nodes) {
    const bool conv = is_prepared_conv(g, n, /*as_reader=*/true);
    const bool residual = conv && n.find("residual") && n.attr_bool("residual");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      if (v == kNoValue) continue;
      read[static_cast<size_t>(v)] = 1;
      if (!(conv && (i == 0 || (i == 3 && residual)))) blocked_ok[static_cast<size_t>(v)] = 0;
    }
  }
  for (Node& n : g.nodes) {
    if (!is_prepared_conv(g, n, /*as_reader=*/false) || n.find("output_layout")) continue;
    const size_t v = static_cast<size_t>(n.outputs[0]);
    if (blocked_ok[v] && read[v]) n.attrs.push_back({"output_layout", std::string("blocked")});
  }
  return g;
}

}  // namespace ember::jit

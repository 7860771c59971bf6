#include "ember/jit/passes/fold_batch_norm.h"

#include <cmath>

#include "ember/ops/factory.h"
#include "ember/jit/passes/dead_code.h"
#include "rewrite.h"

namespace ember::jit {

namespace {

std::vector<double> to_doubles(const Tensor& t) {
  Tensor d = t.to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

Tensor from_doubles(const std::vector<double>& v, const std::vector<int64_t>& sizes, ScalarType dtype) {
  Tensor d = empty(sizes, TensorOptions(kFloat64));
  std::copy(v.begin(), v.end(), d.data_ptr<double>());
  return d.to(dtype).contiguous();
}

}  // namespace

Graph fold_batch_norm(const Graph& in) {
  Graph g = in;
  const std::vector<int> uses = passes_detail::use_counts(g);
  const std::vector<int> cidx = passes_detail::constant_index(g);
  const std::vector<int> producer = passes_detail::producers(g);
  auto constant = [&](int v) -> const Constant* {
    if (v == kNoValue || cidx[static_cast<size_t>(v)] < 0) return nullptr;
    return &g.constants[static_cast<size_t>(cidx[static_cast<size_t>(v)])];
  };
  std::vector<char> drop(g.nodes.size(), 0);
  std::vector<Constant> added;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (bn.kind != "batch_norm_apply" || bn.inputs.size() < 3 || bn.outputs.size() != 1 || bn.inputs[0] == kNoValue)
      continue;
    const int x = bn.inputs[0];
    const int p = producer[static_cast<size_t>(x)];
    if (p < 0 || uses[static_cast<size_t>(x)] != 1) continue;
    Node& conv = g.nodes[static_cast<size_t>(p)];
    if (conv.kind != "conv2d" || conv.inputs.size() < 2 || conv.outputs.size() != 1 || conv.find("activation")) continue;
    const Constant* w = constant(conv.inputs[1]);
    const int bias_v = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
    const Constant* b = constant(bias_v);
    if (!w || (bias_v != kNoValue && !b)) continue;
    const Constant* mean = constant(bn.inputs[1]);
    const Constant* var = constant(bn.inputs[2]);
    const int gamma_v = bn.inputs.size() > 3 ? bn.inputs[3] : kNoValue;
    const int beta_v = bn.inputs.size() > 4 ? bn.inputs[4] : kNoValue;
    const Constant* gamma = constant(gamma_v);
    const Constant* beta = constant(beta_v);
    if (!mean || !var || (gamma_v != kNoValue && !gamma) || (beta_v != kNoValue && !beta)) continue;
    const ScalarType dt = w->data.dtype();
    if (!is_floating_point(dt) || w->data.dim() != 4) continue;
    const int64_t c_out = w->data.size(0);
    bool fits = mean->data.numel() == c_out && var->data.numel() == c_out;
    fits = fits && (!gamma || gamma->data.numel() == c_out) && (!beta || beta->data.numel() == c_out);
    fits = fits && (!b || b->data.numel() == c_out);
    if (!fits) continue;

    const double eps = bn.attr_double("eps");
    std::vector<double> wv = to_doubles(w->data), mv = to_doubles(mean->data), vv = to_doubles(var->data);
    std::vector<double> gv = gamma ? to_doubles(gamma->data) : std::vector<double>(static_cast<size_t>(c_out), 1.0);
    std::vector<double> betav = beta ? to_doubles(beta->data) : std::vector<double>(static_cast<size_t>(c_out), 0.0);
    std::vector<double> bv = b ? to_doubles(b->data) : std::vector<double>(static_cast<size_t>(c_out), 0.0);
    const size_t per = wv.size() / static_cast<size_t>(c_out);
    std::vector<double> nb(static_cast<size_t>(c_out));
    for (size_t o = 0; o < static_cast<size_t>(c_out); ++o) {
      const double s = gv[o] / std::sqrt(vv[o] + eps);
      for (size_t k = 0; k < per; ++k) wv[o * per + k] *= s;
      nb[o] = (bv[o] - mv[o]) * s + betav[o];
    }
    Constant nw{passes_detail::fresh_constant_name(g, w->name + ".bn_folded"), g.add_value(g.type(conv.inputs[1])),
                w->kind, from_doubles(wv, w->data.sizes().vec(), dt)};
    TensorType bias_type{dt, {{c_out, ""}}};
    Constant nbias{passes_detail::fresh_constant_name(g, (b ? b->name : w->name) + ".bias.bn_folded"),
                   g.add_value(bias_type), w->kind, from_doubles(nb, {c_out}, dt)};
    // Names must stay unique among the ones added in this pass too.
    for (const Constant& a : added) {
      if (a.name == nw.name) nw.name += ".x";
      if (a.name == nbias.name) nbias.name += ".x";
    }
    conv.inputs.resize(3);
    conv.inputs[1] = nw.value;
    conv.inputs[2] = nbias.value;
    conv.outputs[0] = bn.outputs[0];
    drop[i] = 1;
    g.constants.push_back(nw);  // visible to fresh_constant_name for the next fold
    g.constants.push_back(nbias);
    added.push_back(nw);
    added.push_back(nbias);
  }
  passes_detail::drop_nodes(g, drop);
  return eliminate_dead_code(g);
}

}  // namespace ember::jit

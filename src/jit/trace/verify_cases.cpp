// The inputs verify_export checks a graph on beyond the example: other sizes of
// its dynamic dims, and random inputs like the example.
//
// Note [verify cases]: the example inputs alone miss two kinds of wrong graph.
//  - One that is right at the traced size only: a size baked into a view, a
//    symbolic expression fitted wrongly. Each symbol of the graph's inputs is
//    checked at n + 3 for a traced n: no size the tracer probed (n, n±1, n±2,
//    Note [dynamic dims]), so the expressions are tested out of sample. The
//    examples are repeated along every dim of that symbol (wrapping round), so
//    token ids stay valid and lengths stay within a grown sequence.
//  - One that is wrong where the example does not look: an input column the
//    example holds at zero (MNIST's border pixels), embedding rows of tokens
//    it does not contain. Random floating inputs are randn scaled to the
//    example's mean and std (over the whole tensor: the model sees inputs of
//    its usual scale); integer and bool inputs are uniform in the example's
//    [min, max], so token ids stay inside the embedding table and lengths
//    inside the sequence.
#include <algorithm>
#include <cmath>
#include <map>

#include "ember/jit/verify.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "jit/trace/trace_fixed.h"

namespace ember::jit {

namespace {

// The symbol a dim binds at run time: a plain name ("batch"), or empty.
std::string bound_symbol(const Dim& d) {
  if (!d.is_symbolic()) return "";
  SymExpr e = SymExpr::parse(d.symbol);
  const bool plain = e.terms.size() == 1 && e.terms[0].coef == 1 && e.terms[0].symbols.size() == 1;
  return plain ? e.terms[0].symbols[0] : "";
}

Tensor random_floats_like(const Tensor& x, Generator& gen) {
  const std::vector<double> v = x.to(kFloat64).contiguous().to_vector<double>();
  double mean = 0, var = 0;
  for (double a : v) mean += a;
  mean /= static_cast<double>(v.size());
  for (double a : v) var += (a - mean) * (a - mean);
  double sd = std::sqrt(var / static_cast<double>(v.size()));
  // A constant example (or one with inf/nan) says nothing of the scale.
  if (!(sd > 0) || !std::isfinite(sd) || !std::isfinite(mean)) sd = 1, mean = std::isfinite(mean) ? mean : 0;
  Tensor r = randn(x.sizes(), TensorOptions().dtype(kFloat64), &gen);
  return add(mul(r, Scalar(sd)), Scalar(mean)).to(x.dtype());
}

Tensor random_ints_like(const Tensor& x, Generator& gen) {
  const std::vector<int64_t> v = x.to(kInt64).contiguous().to_vector<int64_t>();
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return randint(*lo, *hi + 1, x.sizes(), TensorOptions().dtype(kInt64), &gen).to(x.dtype());
}

}  // namespace

std::vector<std::pair<std::string, std::vector<Tensor>>> other_size_inputs(const Graph& graph,
                                                                           const std::vector<Tensor>& examples) {
  EMBER_CHECK(examples.size() == graph.inputs.size(), "verify: the graph takes {} inputs, got {} examples",
              graph.inputs.size(), examples.size());
  // Symbol -> the (input, dim) pairs it names, in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<size_t, int64_t>>> dims;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const TensorType& t = graph.type(graph.inputs[i].value);
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const std::string s = bound_symbol(t.shape[d]);
      if (s.empty()) continue;
      if (!dims.count(s)) order.push_back(s);
      dims[s].emplace_back(i, static_cast<int64_t>(d));
    }
  }
  std::vector<std::pair<std::string, std::vector<Tensor>>> cases;
  for (const std::string& s : order) {
    const auto [i0, d0] = dims[s].front();
    const int64_t n = examples[i0].size(d0) + 3;  // out of the tracer's probes (Note [verify cases])
    std::vector<Tensor> in = examples;
    for (const auto& [i, d] : dims[s]) {
      EMBER_CHECK(in[i].size(d) > 0, "verify: example input '{}' has size 0 in dim {} ('{}'): nothing to repeat",
                  graph.inputs[i].name, d, s);
      in[i] = resize_dim(in[i], d, n);
    }
    cases.emplace_back(s + "=" + std::to_string(n), std::move(in));
  }
  return cases;
}

std::vector<Tensor> random_inputs_like(const std::vector<Tensor>& examples, uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> out;
  for (const Tensor& x : examples) {
    if (x.numel() == 0) out.push_back(x);
    else if (is_floating_point(x.dtype())) out.push_back(random_floats_like(x, gen));
    else out.push_back(random_ints_like(x, gen));
  }
  return out;
}

}  // namespace ember::jit

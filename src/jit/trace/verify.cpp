#include "ember/jit/verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ember/core/grad_mode.h"
#include "ember/jit/interpreter.h"

namespace ember::jit {

namespace {

OutputDiff compare(const std::string& name, const Tensor& eager, const Tensor& graph, Tolerance tol) {
  OutputDiff d;
  d.name = name;
  if (eager.dtype() != graph.dtype() || !eager.sizes().equals(graph.sizes())) {
    d.problem = fmt::format("eager gives {}[{}], the graph {}[{}]", to_string(eager.dtype()),
                            fmt::join(eager.sizes(), ", "), to_string(graph.dtype()), fmt::join(graph.sizes(), ", "));
    return d;
  }
  Tensor a = eager.contiguous(), b = graph.contiguous();
  d.bitwise_equal = std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.nbytes())) == 0;
  Tensor a64 = a.to(kFloat64).contiguous(), b64 = b.to(kFloat64).contiguous();
  const double* pa = a64.data_ptr<double>();
  const double* pb = b64.data_ptr<double>();
  // Note [verify tolerance]: a pass that reorders a sum (a fused or blocked
  // kernel) changes each output by rounding errors of the size of its
  // summands, not of the result: an output that cancels to near zero can
  // differ by far more than rtol of itself. So rtol is relative to the
  // output tensor's largest magnitude: |eager - graph| <= atol + rtol * max|eager|.
  double scale = 0;
  for (int64_t i = 0; i < a64.numel(); ++i)
    if (std::isfinite(pa[i])) scale = std::max(scale, std::abs(pa[i]));
  bool within = true;
  for (int64_t i = 0; i < a64.numel(); ++i) {
    const double x = pa[i], y = pb[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) within = false, d.max_abs = INFINITY;
      continue;
    }
    if (x == y) continue;  // equal infinities included
    const double diff = std::abs(x - y);
    d.max_abs = std::max(d.max_abs, diff);
    if (x != 0) d.max_rel = std::max(d.max_rel, diff / std::abs(x));
    if (!(diff <= tol.atol + tol.rtol * std::max(std::abs(x), scale))) within = false;
  }
  d.ok = tol.rtol == 0 && tol.atol == 0 ? d.bitwise_equal : within;
  return d;
}

std::string line(const OutputDiff& d) {
  if (!d.problem.empty()) return fmt::format("{}: MISMATCH {}", d.name, d.problem);
  return fmt::format("{}: max abs diff {:.3g}, max rel diff {:.3g}{}{}", d.name, d.max_abs, d.max_rel,
                     d.bitwise_equal ? " (bitwise equal)" : "", d.ok ? "" : " OUT OF TOLERANCE");
}

VerifyCase run_case(std::string name, nn::Module& module, const TraceFn& fn, const Graph& graph,
                    const std::vector<Tensor>& inputs, Tolerance tol) {
  VerifyCase c;
  c.name = std::move(name);
  for (const Tensor& t : inputs) c.input_sizes.push_back(t.sizes().vec());
  try {
    c.result = verify(module, fn, graph, inputs, tol);
  } catch (const std::exception& e) {
    c.error = e.what();  // eager or the graph cannot run this case: it fails, the others still run
  }
  return c;
}

}  // namespace

std::string VerifyResult::str() const {
  std::string s;
  for (const OutputDiff& d : outputs) s += line(d) + "\n";
  return s;
}

std::string VerifyReport::str() const {
  std::string s;
  for (const VerifyCase& c : cases) {
    std::vector<std::string> sizes;
    for (const auto& v : c.input_sizes) sizes.push_back(fmt::format("[{}]", fmt::join(v, ", ")));
    const std::string head = fmt::format("{} {}", c.name, fmt::join(sizes, ", "));
    if (!c.error.empty()) s += fmt::format("{}: FAILED: {}\n", head, c.error);
    for (const OutputDiff& d : c.result.outputs) s += fmt::format("{}: {}\n", head, line(d));
  }
  return s;
}

VerifyResult verify(nn::Module& module, const TraceFn& fn, const Graph& graph, const std::vector<Tensor>& inputs,
                    Tolerance tol) {
  std::vector<Tensor> eager;
  {
    const bool was_training = module.is_training();
    module.eval();
    NoGradGuard no_grad;
    try {
      eager = fn(inputs);
    } catch (...) {
      if (was_training) module.train(true);
      throw;
    }
    if (was_training) module.train(true);
  }
  std::vector<Tensor> got = run(graph, inputs);
  EMBER_CHECK(eager.size() == got.size(), "verify: the module returned {} outputs, the graph {}", eager.size(),
              got.size());
  VerifyResult r;
  r.ok = true;
  for (size_t i = 0; i < got.size(); ++i) {
    r.outputs.push_back(compare(graph.outputs[i].name, eager[i], got[i], tol));
    r.ok = r.ok && r.outputs.back().ok;
  }
  return r;
}

VerifyResult verify(nn::Module& module, const Graph& graph, const std::vector<Tensor>& inputs, Tolerance tol) {
  EMBER_CHECK(inputs.size() == 1, "verify: module.forward takes one input, got {}", inputs.size());
  return verify(
      module, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{module.forward(in[0])}; }, graph,
      inputs, tol);
}

VerifyReport verify_export(nn::Module& module, const TraceFn& fn, const Graph& graph,
                           const std::vector<Tensor>& example_inputs, const VerifyOptions& options) {
  VerifyReport r;
  r.cases.push_back(run_case("example", module, fn, graph, example_inputs, options.tol));
  if (options.other_sizes)
    for (auto& [name, inputs] : other_size_inputs(graph, example_inputs))
      r.cases.push_back(run_case(name, module, fn, graph, inputs, options.tol));
  if (options.random)
    r.cases.push_back(
        run_case("random", module, fn, graph, random_inputs_like(example_inputs, options.seed), options.tol));
  for (const auto& [name, inputs] : options.extra_cases)
    r.cases.push_back(run_case(name, module, fn, graph, inputs, options.tol));
  r.ok = std::all_of(r.cases.begin(), r.cases.end(), [](const VerifyCase& c) { return c.ok(); });
  return r;
}

VerifyReport verify_export(nn::Module& module, const Graph& graph, const std::vector<Tensor>& example_inputs,
                           const VerifyOptions& options) {
  EMBER_CHECK(example_inputs.size() == 1, "verify: module.forward takes one input, got {}", example_inputs.size());
  return verify_export(
      module, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{module.forward(in[0])}; }, graph,
      example_inputs, options);
}

}  // namespace ember::jit

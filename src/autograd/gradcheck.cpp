// gradcheck / gradgradcheck: analytic Jacobian rows (one backward per output
// element) against central differences.
#include "ember/autograd/gradcheck.h"

#include <cmath>

#include "ember/autograd/autograd.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"

namespace ember::autograd {
namespace {

// Outputs flattened into one float64 vector.
std::vector<double> flat_outputs(const DiffFn& fn, const variable_list& inputs) {
  NoGradGuard no_grad;
  std::vector<double> out;
  for (const Tensor& t : fn(inputs)) {
    if (!t.defined()) continue;
    auto v = t.to_vector<double>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Storage position of every element of t, in logical row-major order.
std::vector<int64_t> storage_offsets(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.numel()));
  int64_t nd = t.dim();
  DimVector idx(static_cast<size_t>(nd), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t off = t.storage_offset();
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.stride(d);
    out.push_back(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.size(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

void gradcheck(const DiffFn& fn, const variable_list& inputs, const GradcheckOptions& opts) {
  std::vector<size_t> diff_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    EMBER_CHECK(inputs[i].dtype() == kFloat64,
                "gradcheck: input {} has dtype {}; finite differences need float64 inputs", i,
                to_string(inputs[i].dtype()));
    diff_inputs.push_back(i);
  }
  EMBER_CHECK(!diff_inputs.empty(), "gradcheck: no input requires grad");

  variable_list outputs = fn(inputs);
  std::vector<int64_t> out_sizes;
  for (const Tensor& o : outputs) out_sizes.push_back(o.defined() ? o.numel() : 0);

  for (size_t in_idx : diff_inputs) {
    const Tensor& x = inputs[in_idx];
    // Finite differences write straight into the storage element behind
    // each logical index, so strided (e.g. transposed) inputs work too.
    int64_t n = x.numel();
    std::vector<int64_t> offsets = storage_offsets(x);
    double* base = static_cast<double*>(x.storage()->data());
    // numerical[j][k]: d out_k / d x_j
    std::vector<std::vector<double>> numerical(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      double& elem = base[offsets[j]];
      double orig = elem;
      elem = orig + opts.eps;
      x.bump_version();
      std::vector<double> plus = flat_outputs(fn, inputs);
      elem = orig - opts.eps;
      x.bump_version();
      std::vector<double> minus = flat_outputs(fn, inputs);
      elem = orig;
      x.bump_version();
      numerical[j].resize(plus.size());
      for (size_t k = 0; k < plus.size(); ++k) numerical[j][k] = (plus[k] - minus[k]) / (2 * opts.eps);
    }
    // Analytic: one grad() per output element.
    size_t k_global = 0;
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (!outputs[o].defined() || !outputs[o].requires_grad()) {
        k_global += static_cast<size_t>(out_sizes[o]);
        continue;
      }
      for (int64_t k = 0; k < out_sizes[o]; ++k, ++k_global) {
        Tensor seed = zeros({outputs[o].numel()}, outputs[o].dtype());
        seed.narrow(0, k, 1).fill_(1.0);
        variable_list fresh = fn(inputs);
        variable_list g = grad({fresh[o]}, {x}, {seed.reshape(outputs[o].sizes())}, false, false, true);
        std::vector<double> row = g[0].defined() ? g[0].to_vector<double>() : std::vector<double>(n, 0.0);
        for (int64_t j = 0; j < n; ++j) {
          double a = row[j], num = numerical[j][k_global];
          EMBER_CHECK(std::fabs(a - num) <= opts.atol + opts.rtol * std::fabs(num),
                      "gradcheck: Jacobian mismatch for output {} element {} with respect to input {} element "
                      "{}: numerical {:.8g}, analytical {:.8g}",
                      o, k, in_idx, j, num, a);
        }
      }
    }
  }
}

void gradgradcheck(const DiffFn& fn, const variable_list& inputs, const GradcheckOptions& opts) {
  variable_list outputs = fn(inputs);
  Generator gen(1234);
  variable_list grad_outputs;
  for (const Tensor& o : outputs)
    grad_outputs.push_back(randn(o.sizes(), kFloat64, &gen).requires_grad_());
  std::vector<size_t> diff;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].requires_grad()) diff.push_back(i);
  // f(inputs, grad_outputs) = vjp of fn: its Jacobian is fn's second derivative.
  DiffFn first = [&](const variable_list& args) {
    EnableGradGuard grad_on;  // finite differences call this under NoGradGuard
    variable_list in(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
    variable_list go(args.begin() + static_cast<std::ptrdiff_t>(inputs.size()), args.end());
    variable_list outs = fn(in);
    variable_list wrt;
    for (size_t i : diff) wrt.push_back(in[i]);
    variable_list g = grad(outs, wrt, go, true, true, true);
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros(wrt[i].sizes(), kFloat64);
    return g;
  };
  variable_list all = inputs;
  all.insert(all.end(), grad_outputs.begin(), grad_outputs.end());
  gradcheck(first, all, opts);
}

}  // namespace ember::autograd

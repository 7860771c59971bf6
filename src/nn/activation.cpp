// Activation modules.
#include "ember/nn/activation.h"

#include <cmath>

#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"
#include "ops/op_util.h"

namespace ember::nn {

namespace {
// Softplus's defaults are Python ints (beta=1, threshold=20) and print
// without ".0"; keep that for integral values.
std::string py_number(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{}", static_cast<int64_t>(v)) : py_float(v);
}
}  // namespace

Tensor ReLU::forward(const Tensor& input) { return relu(input); }

Tensor LeakyReLU::forward(const Tensor& input) { return leaky_relu(input, negative_slope); }
std::string LeakyReLU::extra_repr() const { return "negative_slope=" + py_float(negative_slope); }

GELU::GELU(std::string approx) : Module("GELU"), approximate(std::move(approx)) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "GELU: approximate must be 'none' or 'tanh', got '{}'",
              approximate);
}
Tensor GELU::forward(const Tensor& input) { return gelu(input, approximate); }
std::string GELU::extra_repr() const { return "approximate='" + approximate + "'"; }

Tensor SiLU::forward(const Tensor& input) { return silu(input); }
Tensor Sigmoid::forward(const Tensor& input) { return sigmoid(input); }
Tensor Tanh::forward(const Tensor& input) { return tanh(input); }

Tensor Softmax::forward(const Tensor& input) { return softmax(input, dim); }
std::string Softmax::extra_repr() const { return fmt::format("dim={}", dim); }

Tensor Softmax2d::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "Softmax2d: expected a 3D or 4D tensor as input, got shape {}",
              shape_str(input.sizes()));
  return softmax(input, -3);
}
Tensor LogSoftmax::forward(const Tensor& input) { return log_softmax(input, dim); }
std::string LogSoftmax::extra_repr() const { return fmt::format("dim={}", dim); }

Tensor Softplus::forward(const Tensor& input) { return softplus(input, beta, threshold); }
std::string Softplus::extra_repr() const {
  return fmt::format("beta={}, threshold={}", py_number(beta), py_number(threshold));
}

Tensor ELU::forward(const Tensor& input) { return elu(input, alpha); }
std::string ELU::extra_repr() const { return "alpha=" + py_float(alpha); }

// ---- more activation modules ----
namespace {
// `inplace` modules write the result into their input and return it.
// (Under autograd, a module computing in place would need the input's old
// value for its backward: use the functional `_` forms there.)
Tensor maybe_inplace(const Tensor& input, const Tensor& result, bool inplace) {
  if (!inplace) return result;
  Tensor self = input;
  self.copy_(result);
  return self;
}
std::string inplace_suffix(bool inplace) { return inplace ? ", inplace=True" : ""; }
}  // namespace

Tensor Threshold::forward(const Tensor& input) {
  return maybe_inplace(input, ember::threshold(input, threshold, value), inplace);
}
std::string Threshold::extra_repr() const {
  return fmt::format("threshold={}, value={}{}", py_float(threshold), py_float(value), inplace_suffix(inplace));
}

Hardtanh::Hardtanh(double min_val, double max_val, bool inplace) : Hardtanh("Hardtanh", min_val, max_val, inplace) {}
Hardtanh::Hardtanh(std::string type_name, double min_val, double max_val, bool inplace)
    : Module(std::move(type_name)), min_val(min_val), max_val(max_val), inplace(inplace) {
  EMBER_CHECK(max_val > min_val, "{}: max_val ({}) must be greater than min_val ({})", this->type_name(),
              max_val, min_val);
}
Tensor Hardtanh::forward(const Tensor& input) {
  return maybe_inplace(input, hardtanh(input, min_val, max_val), inplace);
}
std::string Hardtanh::extra_repr() const {
  return fmt::format("min_val={}, max_val={}{}", py_float(min_val), py_float(max_val), inplace_suffix(inplace));
}
std::string ReLU6::extra_repr() const { return inplace ? "inplace=True" : ""; }

Tensor Hardsigmoid::forward(const Tensor& input) { return maybe_inplace(input, hardsigmoid(input), inplace); }
Tensor Hardswish::forward(const Tensor& input) { return maybe_inplace(input, hardswish(input), inplace); }

Tensor SELU::forward(const Tensor& input) { return maybe_inplace(input, selu(input), inplace); }
std::string SELU::extra_repr() const { return inplace ? "inplace=True" : ""; }

Tensor CELU::forward(const Tensor& input) { return maybe_inplace(input, celu(input, alpha), inplace); }
std::string CELU::extra_repr() const { return "alpha=" + py_float(alpha) + inplace_suffix(inplace); }

PReLU::PReLU(int64_t num_parameters, double init)
    : Module("PReLU"),
      num_parameters(num_parameters),
      weight(register_parameter("weight", full({num_parameters}, init))) {
  EMBER_CHECK(num_parameters >= 1, "PReLU: num_parameters must be at least 1, got {}", num_parameters);
}
Tensor PReLU::forward(const Tensor& input) { return prelu(input, weight); }
std::string PReLU::extra_repr() const { return fmt::format("num_parameters={}", num_parameters); }

Tensor RReLU::forward(const Tensor& input) {
  return maybe_inplace(input, rrelu(input, lower, upper, is_training()), inplace);
}
std::string RReLU::extra_repr() const {
  return fmt::format("lower={}, upper={}{}", py_float(lower), py_float(upper), inplace_suffix(inplace));
}

Tensor GLU::forward(const Tensor& input) { return glu(input, dim); }
std::string GLU::extra_repr() const { return fmt::format("dim={}", dim); }

Tensor LogSigmoid::forward(const Tensor& input) { return logsigmoid(input); }

Tensor Hardshrink::forward(const Tensor& input) { return hardshrink(input, lambd); }
std::string Hardshrink::extra_repr() const { return py_float(lambd); }
Tensor Softshrink::forward(const Tensor& input) { return softshrink(input, lambd); }
std::string Softshrink::extra_repr() const { return py_float(lambd); }
Tensor Tanhshrink::forward(const Tensor& input) { return tanhshrink(input); }
Tensor Softsign::forward(const Tensor& input) { return softsign(input); }
Tensor Mish::forward(const Tensor& input) { return maybe_inplace(input, mish(input), inplace); }

Tensor Softmin::forward(const Tensor& input) { return softmin(input, dim); }
std::string Softmin::extra_repr() const { return fmt::format("dim={}", dim); }

}  // namespace ember::nn

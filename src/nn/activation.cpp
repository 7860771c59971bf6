// Activation modules.
#include "ember/nn/activation.h"

#include <cmath>

#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/reduction.h"

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

Tensor LogSoftmax::forward(const Tensor& input) { return log_softmax(input, dim); }
std::string LogSoftmax::extra_repr() const { return fmt::format("dim={}", dim); }

Tensor Softplus::forward(const Tensor& input) { return softplus(input, beta, threshold); }
std::string Softplus::extra_repr() const {
  return fmt::format("beta={}, threshold={}", py_number(beta), py_number(threshold));
}

Tensor ELU::forward(const Tensor& input) { return elu(input, alpha); }
std::string ELU::extra_repr() const { return "alpha=" + py_float(alpha); }

}  // namespace ember::nn

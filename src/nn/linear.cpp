// Linear and Bilinear.
#include "ember/nn/linear.h"

#include <cmath>

#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ember/ops/reduction.h"
#include "ember/nn/init.h"

namespace ember::nn {

Linear::Linear(int64_t in, int64_t out, bool has_bias, ScalarType dtype)
    : Module("Linear"),
      in_features(in),
      out_features(out),
      weight(register_parameter("weight", empty({out, in}, dtype))),
      bias(register_parameter("bias", has_bias ? empty({out}, dtype) : Tensor())) {
  EMBER_CHECK(in >= 0 && out >= 0, "Linear: expected non-negative in_features and out_features, got {} and {}", in,
              out);
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 1 && input.size(-1) == in_features,
              "Linear: expected input with last dim in_features={}, got shape [{}]", in_features,
              fmt::join(input.sizes().vec(), ", "));
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features, py_bool(bias.defined()));
}

Bilinear::Bilinear(int64_t in1, int64_t in2, int64_t out, bool has_bias, ScalarType dtype)
    : Module("Bilinear"),
      in1_features(in1),
      in2_features(in2),
      out_features(out),
      weight(register_parameter("weight", empty({out, in1, in2}, dtype))),
      bias(register_parameter("bias", has_bias ? empty({out}, dtype) : Tensor())) {
  reset_parameters();
}

void Bilinear::reset_parameters() {
  double bound = 1.0 / std::sqrt(static_cast<double>(weight.size(1)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor Bilinear::forward(const Tensor& x1, const Tensor& x2) {
  EMBER_CHECK(x1.dim() >= 1 && x1.size(-1) == in1_features && x2.dim() >= 1 && x2.size(-1) == in2_features &&
                  x1.sizes().vec().size() == x2.sizes().vec().size(),
              "Bilinear: expected input1 [*, {}] and input2 [*, {}] with the same leading dims, got [{}] and [{}]",
              in1_features, in2_features, fmt::join(x1.sizes().vec(), ", "), fmt::join(x2.sizes().vec(), ", "));
  std::vector<int64_t> lead(x1.sizes().begin(), x1.sizes().end() - 1);
  Tensor a = x1.reshape({-1, in1_features});
  Tensor b = x2.reshape({-1, in2_features});
  // y[n, o] = sum_ij a[n, i] W[o, i, j] b[n, j]: contract i with one GEMM,
  // then j elementwise.
  Tensor w = weight.permute({1, 0, 2}).reshape({in1_features, out_features * in2_features});
  Tensor t = matmul(a, w).view({-1, out_features, in2_features});
  Tensor y = sum(t * b.unsqueeze(1), {2});
  if (bias.defined()) y = y + bias;
  lead.push_back(out_features);
  return y.view(lead);
}

std::string Bilinear::extra_repr() const {
  return fmt::format("in1_features={}, in2_features={}, out_features={}, bias={}", in1_features, in2_features,
                     out_features, py_bool(bias.defined()));
}

}  // namespace ember::nn

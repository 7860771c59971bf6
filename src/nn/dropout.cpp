// Dropout modules.
#include "ember/nn/dropout.h"

#include "ember/ops/activation.h"
#include "ember/ops/dropout.h"

namespace ember::nn {

namespace {
void check_p(double p, const char* who) {
  EMBER_CHECK(p >= 0 && p <= 1, "{}: dropout probability has to be between 0 and 1, but got {}", who, p);
}
}  // namespace

Dropout::Dropout(double p_, Generator* gen) : Module("Dropout"), p(p_), generator(gen) { check_p(p, "Dropout"); }
Tensor Dropout::forward(const Tensor& input) { return dropout(input, p, is_training(), generator); }
std::string Dropout::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

Dropout2d::Dropout2d(double p_, Generator* gen) : Module("Dropout2d"), p(p_), generator(gen) {
  check_p(p, "Dropout2d");
}
Tensor Dropout2d::forward(const Tensor& input) { return dropout2d(input, p, is_training(), generator); }
std::string Dropout2d::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

Dropout1d::Dropout1d(double p_, Generator* gen) : Module("Dropout1d"), p(p_), generator(gen) {
  check_p(p, "Dropout1d");
}
Tensor Dropout1d::forward(const Tensor& input) { return dropout1d(input, p, is_training(), generator); }
std::string Dropout1d::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

Dropout3d::Dropout3d(double p_, Generator* gen) : Module("Dropout3d"), p(p_), generator(gen) {
  check_p(p, "Dropout3d");
}
Tensor Dropout3d::forward(const Tensor& input) { return dropout3d(input, p, is_training(), generator); }
std::string Dropout3d::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

AlphaDropout::AlphaDropout(double p_, Generator* gen) : Module("AlphaDropout"), p(p_), generator(gen) {
  check_p(p, "AlphaDropout");
}
Tensor AlphaDropout::forward(const Tensor& input) { return alpha_dropout(input, p, is_training(), generator); }
std::string AlphaDropout::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

}  // namespace ember::nn

// Activation modules (torch.nn.ReLU & co.), thin wrappers of the ops.
#pragma once

#include <string>

#include "ember/nn/module.h"

namespace ember::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};

class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double negative_slope;
};

// approximate: "none" (erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const std::string approximate;
};

class SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t dim;
};

// Softmax over the channels of a (C, H, W) or (N, C, H, W) input.
class Softmax2d : public Module {
 public:
  Softmax2d() : Module("Softmax2d") {}
  Tensor forward(const Tensor& input) override;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t dim;
};

class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1, double threshold = 20) : Module("Softplus"), beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double beta, threshold;
};

class ELU : public Module {
 public:
  explicit ELU(double alpha = 1) : Module("ELU"), alpha(alpha) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double alpha;
};

// ---- more activation modules (torch.nn's constructor arguments and repr) ----
// `inplace`: the result is written into the input, which is returned.

class Threshold : public Module {
 public:
  Threshold(double threshold, double value, bool inplace = false)
      : Module("Threshold"), threshold(threshold), value(value), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double threshold, value;
  const bool inplace;
};

class Hardtanh : public Module {
 public:
  explicit Hardtanh(double min_val = -1, double max_val = 1, bool inplace = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double min_val, max_val;
  const bool inplace;

 protected:
  Hardtanh(std::string type_name, double min_val, double max_val, bool inplace);
};

// Hardtanh(0, 6); its repr shows only inplace.
class ReLU6 : public Hardtanh {
 public:
  explicit ReLU6(bool inplace = false) : Hardtanh("ReLU6", 0, 6, inplace) {}
  std::string extra_repr() const override;
};

class Hardsigmoid : public Module {
 public:
  explicit Hardsigmoid(bool inplace = false) : Module("Hardsigmoid"), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  const bool inplace;
};

class Hardswish : public Module {
 public:
  explicit Hardswish(bool inplace = false) : Module("Hardswish"), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  const bool inplace;
};

class SELU : public Module {
 public:
  explicit SELU(bool inplace = false) : Module("SELU"), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const bool inplace;
};

class CELU : public Module {
 public:
  explicit CELU(double alpha = 1, bool inplace = false) : Module("CELU"), alpha(alpha), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double alpha;
  const bool inplace;
};

// One learnable slope (`weight`, initialised to `init`) shared by all
// channels, or one per channel (num_parameters = C).
class PReLU : public Module {
 public:
  explicit PReLU(int64_t num_parameters = 1, double init = 0.25);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t num_parameters;
  Tensor& weight;
};

// Random negative slope from U(lower, upper) in training, (lower + upper) / 2 in eval.
class RReLU : public Module {
 public:
  explicit RReLU(double lower = 1.0 / 8, double upper = 1.0 / 3, bool inplace = false)
      : Module("RReLU"), lower(lower), upper(upper), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double lower, upper;
  const bool inplace;
};

class GLU : public Module {
 public:
  explicit GLU(int64_t dim = -1) : Module("GLU"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t dim;
};

class LogSigmoid : public Module {
 public:
  LogSigmoid() : Module("LogSigmoid") {}
  Tensor forward(const Tensor& input) override;
};

class Hardshrink : public Module {
 public:
  explicit Hardshrink(double lambd = 0.5) : Module("Hardshrink"), lambd(lambd) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double lambd;
};

class Softshrink : public Module {
 public:
  explicit Softshrink(double lambd = 0.5) : Module("Softshrink"), lambd(lambd) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double lambd;
};

class Tanhshrink : public Module {
 public:
  Tanhshrink() : Module("Tanhshrink") {}
  Tensor forward(const Tensor& input) override;
};

class Softsign : public Module {
 public:
  Softsign() : Module("Softsign") {}
  Tensor forward(const Tensor& input) override;
};

class Mish : public Module {
 public:
  explicit Mish(bool inplace = false) : Module("Mish"), inplace(inplace) {}
  Tensor forward(const Tensor& input) override;
  const bool inplace;
};

class Softmin : public Module {
 public:
  explicit Softmin(int64_t dim) : Module("Softmin"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t dim;
};

}  // namespace ember::nn

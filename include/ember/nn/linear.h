// Affine layers: Identity, Linear, Bilinear (torch.nn.Linear & co.).
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

// Returns its input (a placeholder, e.g. to remove a layer from a model).
class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};

// y = x W^T + b, W [out_features, in_features]. Initialised like PyTorch:
// W ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform_ with a = sqrt(5)), b alike.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_features, out_features;
  Tensor& weight;
  Tensor& bias;  // undefined when bias = false
};

// y = x1^T A x2 + b, A [out_features, in1_features, in2_features].
class Bilinear : public Module {
 public:
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true,
           ScalarType dtype = kFloat32);
  using Module::forward;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  Tensor operator()(const Tensor& input1, const Tensor& input2) { return forward(input1, input2); }
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in1_features, in2_features, out_features;
  Tensor& weight;
  Tensor& bias;
};

}  // namespace ember::nn

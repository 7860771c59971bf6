// CosineSimilarity and PairwiseDistance (torch.nn names; forward(x1, x2)).
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

class CosineSimilarity : public Module {
 public:
  explicit CosineSimilarity(int64_t dim = 1, double eps = 1e-8);
  using Module::forward;
  Tensor forward(const Tensor& x1, const Tensor& x2);
  Tensor operator()(const Tensor& x1, const Tensor& x2) { return forward(x1, x2); }
  const int64_t dim;
  const double eps;
};

class PairwiseDistance : public Module {
 public:
  explicit PairwiseDistance(double p = 2.0, double eps = 1e-6, bool keepdim = false);
  using Module::forward;
  Tensor forward(const Tensor& x1, const Tensor& x2);
  Tensor operator()(const Tensor& x1, const Tensor& x2) { return forward(x1, x2); }
  const double norm;  // PyTorch's attribute name for p
  const double eps;
  const bool keepdim;
};

}  // namespace ember::nn

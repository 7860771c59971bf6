// torch's free in-place functions (torch.abs_(x), torch.relu_(x),
// F.relu_(x), torch.clamp_(x, 0, 1), ...): the spellings a port from Python
// reaches for. Each writes into x and returns it, exactly as x.name_(...)
// does (same dtype rules, same autograd). The activations' free forms
// (threshold_, hardtanh_, elu_, leaky_relu_, celu_, selu_, rrelu_) are in
// activation.h, dropout_ and alpha_dropout_ in dropout.h.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

Tensor& abs_(Tensor& x);
Tensor& neg_(Tensor& x);
Tensor& reciprocal_(Tensor& x);
Tensor& square_(Tensor& x);
Tensor& sqrt_(Tensor& x);
Tensor& rsqrt_(Tensor& x);
Tensor& exp_(Tensor& x);
Tensor& exp2_(Tensor& x);
Tensor& expm1_(Tensor& x);
Tensor& log_(Tensor& x);
Tensor& log2_(Tensor& x);
Tensor& log10_(Tensor& x);
Tensor& log1p_(Tensor& x);
Tensor& sin_(Tensor& x);
Tensor& cos_(Tensor& x);
Tensor& tan_(Tensor& x);
Tensor& asin_(Tensor& x);
Tensor& acos_(Tensor& x);
Tensor& atan_(Tensor& x);
Tensor& sinh_(Tensor& x);
Tensor& cosh_(Tensor& x);
Tensor& asinh_(Tensor& x);
Tensor& acosh_(Tensor& x);
Tensor& atanh_(Tensor& x);
Tensor& sinc_(Tensor& x);
Tensor& erf_(Tensor& x);
Tensor& erfc_(Tensor& x);
Tensor& deg2rad_(Tensor& x);
Tensor& rad2deg_(Tensor& x);
Tensor& ceil_(Tensor& x);
Tensor& floor_(Tensor& x);
Tensor& trunc_(Tensor& x);
Tensor& frac_(Tensor& x);
Tensor& round_(Tensor& x);
Tensor& round_(Tensor& x, int64_t decimals);
Tensor& sigmoid_(Tensor& x);
Tensor& tanh_(Tensor& x);
Tensor& relu_(Tensor& x);
Tensor& logit_(Tensor& x, std::optional<double> eps = std::nullopt);
Tensor& nan_to_num_(Tensor& x, std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt);
Tensor& clamp_(Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor& clamp_(Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor& xlogy_(Tensor& x, const Tensor& other);
Tensor& xlogy_(Tensor& x, const Scalar& other);
Tensor& addmv_(Tensor& x, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor& index_put_(Tensor& x, TensorList indices, const Tensor& values, bool accumulate = false);

}  // namespace ember

// The free in-place functions: each forwards to its Tensor method, which
// holds the dtype checks and the autograd.
#include "ember/ops/inplace_functions.h"

#include "ember/ops/factory.h"

namespace ember {

Tensor& abs_(Tensor& x) { return x.abs_(); }
Tensor& neg_(Tensor& x) { return x.neg_(); }
Tensor& reciprocal_(Tensor& x) { return x.reciprocal_(); }
Tensor& square_(Tensor& x) { return x.square_(); }
Tensor& sqrt_(Tensor& x) { return x.sqrt_(); }
Tensor& rsqrt_(Tensor& x) { return x.rsqrt_(); }
Tensor& exp_(Tensor& x) { return x.exp_(); }
Tensor& exp2_(Tensor& x) { return x.exp2_(); }
Tensor& expm1_(Tensor& x) { return x.expm1_(); }
Tensor& log_(Tensor& x) { return x.log_(); }
Tensor& log2_(Tensor& x) { return x.log2_(); }
Tensor& log10_(Tensor& x) { return x.log10_(); }
Tensor& log1p_(Tensor& x) { return x.log1p_(); }
Tensor& sin_(Tensor& x) { return x.sin_(); }
Tensor& cos_(Tensor& x) { return x.cos_(); }
Tensor& tan_(Tensor& x) { return x.tan_(); }
Tensor& asin_(Tensor& x) { return x.asin_(); }
Tensor& acos_(Tensor& x) { return x.acos_(); }
Tensor& atan_(Tensor& x) { return x.atan_(); }
Tensor& sinh_(Tensor& x) { return x.sinh_(); }
Tensor& cosh_(Tensor& x) { return x.cosh_(); }
Tensor& asinh_(Tensor& x) { return x.asinh_(); }
Tensor& acosh_(Tensor& x) { return x.acosh_(); }
Tensor& atanh_(Tensor& x) { return x.atanh_(); }
Tensor& sinc_(Tensor& x) { return x.sinc_(); }
Tensor& erf_(Tensor& x) { return x.erf_(); }
Tensor& erfc_(Tensor& x) { return x.erfc_(); }
Tensor& deg2rad_(Tensor& x) { return x.deg2rad_(); }
Tensor& rad2deg_(Tensor& x) { return x.rad2deg_(); }
Tensor& ceil_(Tensor& x) { return x.ceil_(); }
Tensor& floor_(Tensor& x) { return x.floor_(); }
Tensor& trunc_(Tensor& x) { return x.trunc_(); }
Tensor& frac_(Tensor& x) { return x.frac_(); }
Tensor& round_(Tensor& x) { return x.round_(); }
Tensor& round_(Tensor& x, int64_t decimals) { return x.round_(decimals); }
Tensor& sigmoid_(Tensor& x) { return x.sigmoid_(); }
Tensor& tanh_(Tensor& x) { return x.tanh_(); }
Tensor& relu_(Tensor& x) { return x.relu_(); }
Tensor& logit_(Tensor& x, std::optional<double> eps) { return x.logit_(eps); }
Tensor& nan_to_num_(Tensor& x, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  return x.nan_to_num_(nan, posinf, neginf);
}
Tensor& clamp_(Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) { return x.clamp_(min, max); }
Tensor& clamp_(Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return x.clamp_(min, max);
}
Tensor& xlogy_(Tensor& x, const Tensor& other) { return x.xlogy_(other); }
// torch.xlogy_(x, 2.0): the Python scalar is a 0-dim tensor, which leaves x's dtype alone.
Tensor& xlogy_(Tensor& x, const Scalar& other) { return x.xlogy_(scalar_tensor(other)); }
Tensor& addmv_(Tensor& x, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  return x.addmv_(mat, vec, beta, alpha);
}
Tensor& index_put_(Tensor& x, TensorList indices, const Tensor& values, bool accumulate) {
  return x.index_put_(indices, values, accumulate);
}

}  // namespace ember

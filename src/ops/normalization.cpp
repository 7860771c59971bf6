// instance_norm (batch_norm over a batch of one with N * C channels),
// rms_norm and local_response_norm: composites of differentiable ops.
#include "ember/ops/normalization.h"

#include <limits>

#include "ops/op_util.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  const char* op = "instance_norm";
  EMBER_CHECK_TYPE(input.is_floating_point(), "{}: expected a floating-point tensor, got {}", op,
                   to_string(input.dtype()));
  EMBER_CHECK(input.dim() >= 3, "{}: expected input (N, C, *) with at least one spatial dim, got shape {}", op,
              shape_str(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  auto check_vec = [&](const Tensor& t, const char* what) {
    EMBER_CHECK(!t.defined() || (t.dim() == 1 && t.size(0) == c),
                "{}: expected {} of shape [{}] (the input's channel dim), got {}", op, what, c, shape_str(t.sizes()));
  };
  check_vec(running_mean, "running_mean");
  check_vec(running_var, "running_var");
  check_vec(weight, "weight");
  check_vec(bias, "bias");
  if (!use_input_stats) {
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "{}: Expected running_mean and running_var to be defined when use_input_stats is false", op);
    return batch_norm(input, running_mean, running_var, weight, bias, false, momentum, eps);
  }
  if (input.numel() == 0) return input.clone();
  // PyTorch's formulation: (N, C, *) viewed as (1, N * C, *) is batch_norm
  // with per-instance statistics; per-channel tensors are repeated N times.
  std::vector<int64_t> shape = input.sizes().vec();
  std::vector<int64_t> folded = shape;
  folded[0] = 1;
  folded[1] = n * c;
  auto rep = [n](const Tensor& t) { return t.defined() ? t.repeat({n}) : Tensor(); };
  Tensor rm = rep(running_mean), rv = rep(running_var);
  Tensor out = batch_norm(input.reshape(folded), rm, rv, rep(weight), rep(bias), true, momentum, eps);
  if (running_mean.defined() || running_var.defined()) {
    NoGradGuard no_grad;
    Tensor m = running_mean, v = running_var;  // handles: the copies write the caller's storage
    if (m.defined()) m.copy_(mean(rm.view({n, c}), {0}));
    if (v.defined()) v.copy_(mean(rv.view({n, c}), {0}));
  }
  return out.view(shape);
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  EMBER_CHECK_TYPE(input.is_floating_point(), "{}: expected a floating-point tensor, got {}", op,
                   to_string(input.dtype()));
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(k >= 1 && k <= input.dim(), "{}: normalized_shape {} does not fit input of shape {}", op,
              shape_str(normalized_shape), shape_str(input.sizes()));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = input.dim() - k + i;
    EMBER_CHECK(input.size(d) == normalized_shape[i],
                "{}: Given normalized_shape={}, expected input with shape [*, {}], but got input of size {}", op,
                shape_str(normalized_shape), fmt::join(normalized_shape, ", "), shape_str(input.sizes()));
    dims.push_back(d);
  }
  EMBER_CHECK(!weight.defined() || weight.sizes().vec() == normalized_shape.vec(),
              "{}: expected weight of shape {} (normalized_shape), got {}", op, shape_str(normalized_shape),
              shape_str(weight.sizes()));
  double e = eps.value_or(input.dtype() == kFloat64   ? std::numeric_limits<double>::epsilon()
                          : input.dtype() == kFloat16 ? 0.0009765625
                          : input.dtype() == kBFloat16 ? 0.0078125
                                                       : static_cast<double>(std::numeric_limits<float>::epsilon()));
  Tensor out = input * rsqrt(mean(square(input), dims, true) + e);
  return weight.defined() ? out * weight : out;
}

Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  const char* op = "local_response_norm";
  EMBER_CHECK(input.dim() >= 3, "{}: Expected 3D or higher dimensionality input (got {} dimensions)", op,
              input.dim());
  EMBER_CHECK(size > 0, "{}: size must be positive, got {}", op, size);
  if (input.numel() == 0) return input.is_floating_point() ? input : input.to(kDefaultFloat);
  // Mean of x^2 over a channel window: zero-pad dim 1, slide a window of
  // `size` along it (unfold) and average. Integers average as PyTorch's
  // avg_pool does them, truncating; the result is then floating point.
  Tensor sq = square(input).transpose(1, -1);
  Tensor windows = pad(sq, {size / 2, (size - 1) / 2}).unfold(-1, size, 1);
  Tensor avg = (input.is_floating_point() ? mean(windows, {-1}) : div(sum(windows, {-1}), Scalar(size), "trunc"))
                   .transpose(1, -1);
  return input / pow(avg * alpha + k, beta);
}

}  // namespace ember

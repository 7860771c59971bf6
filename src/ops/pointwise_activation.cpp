// torch.nn.functional's elementwise activations beyond relu/gelu/silu/elu
// (declared in include/ember/ops/activation.h): composites of differentiable
// ops, written so the gradient at each kink is PyTorch's and no unused branch
// turns a zero gradient into NaN.
#include <cmath>

#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "ops/grad_utils.h"
#include "ops/op_util.h"

namespace ember {
namespace {
void check_float(const Tensor& x, const char* op) {
  EMBER_CHECK_TYPE(x.is_floating_point(), "{}: expected a floating-point tensor, got {}", op, to_string(x.dtype()));
}
}  // namespace

// NaN is not <= threshold, so it passes through (PyTorch's kernel).
// On integer tensors the threshold and value are cast to the dtype (PyTorch's
// kernel does), so the result stays integral: threshold(int64, 1.5, 0.5)
// compares with 1 and writes 0.
Tensor threshold(const Tensor& x, double threshold, double value) {
  return where(le(x, scalar_in(threshold, x.dtype())), scalar_in(value, x.dtype()), x);
}

// Comparisons leave NaN in the x branch. Boundary points take the constant
// branch: gradient 0 there, like PyTorch's hardtanh_backward.
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  EMBER_CHECK(min_val <= max_val, "hardtanh: min_val ({}) cannot be greater than max_val ({})", min_val, max_val);
  const Scalar lo = scalar_in(min_val, x.dtype()), hi = scalar_in(max_val, x.dtype());  // threshold's rule
  return where(le(x, lo), lo, where(ge(x, hi), hi, x));
}
Tensor relu6(const Tensor& x) { return hardtanh(x, 0, 6); }

Tensor hardsigmoid(const Tensor& x) {
  check_float(x, "hardsigmoid");
  return where(le(x, -3), 0.0, where(ge(x, 3), 1.0, x / 6 + 0.5));
}
// The quadratic piece covers [-3, 3] so the gradient at the kinks is
// PyTorch's (x / 3 + 0.5: -0.5 at -3, 1.5 at 3).
Tensor hardswish(const Tensor& x) {
  check_float(x, "hardswish");
  return where(lt(x, -3), 0.0, where(le(x, 3), x * (x + 3) / 6, x));
}

Tensor selu(const Tensor& x) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  check_float(x, "selu");
  // PyTorch's elu kernel order: expm1(x) * (alpha * scale) for x <= 0.
  return where(gt(x, 0), x * kScale, expm1(clamp_max(x, 0)) * (kAlpha * kScale));
}

Tensor celu(const Tensor& x, double alpha) {
  check_float(x, "celu");
  EMBER_CHECK(alpha != 0, "celu: ZeroDivisionError: alpha cannot be 0 for CELU");
  return where(gt(x, 0), x, expm1(clamp_max(x, 0) / alpha) * alpha);
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  check_float(x, "prelu");
  EMBER_CHECK(weight.dim() <= 1, "prelu: expected weight to be a scalar or 1-D tensor, got shape {}",
              shape_str(weight.sizes()));
  const int64_t n = weight.numel();
  if (n != 1)
    EMBER_CHECK(x.dim() >= 2 && x.size(1) == n,
                "prelu: expected weight with 1 element or one per channel (input.size(1) = {}), got {} elements "
                "for input of shape {}",
                x.dim() >= 2 ? x.size(1) : 1, n, shape_str(x.sizes()));
  Tensor w = n == 1 ? weight.reshape({}) : weight.reshape(channel_shape(x));
  return where(gt(x, 0), x, x * w);
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training, Generator* gen) {
  check_float(x, "rrelu");
  EMBER_CHECK(lower <= upper, "rrelu: lower bound ({}) must be less than or equal to upper bound ({})", lower,
              upper);
  if (!training) return where(gt(x, 0), x, x * ((lower + upper) / 2));
  Tensor slope = empty_like(x).uniform_(lower, upper, gen);
  return where(le(x, 0), x * slope, x);
}

Tensor glu(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, "glu: does not support scalars because the halving size must be even");
  int64_t d = wrap_dim(dim, x.dim(), "glu");
  int64_t n = x.size(d);
  EMBER_CHECK(n % 2 == 0, "glu: halving dimension must be even, but dimension {} is size {}", d, n);
  return narrow(x, d, 0, n / 2) * sigmoid(narrow(x, d, n / 2, n / 2));
}

// min(x, 0) - log1p(exp(-|x|)): exp never overflows.
Tensor logsigmoid(const Tensor& x) {
  check_float(x, "logsigmoid");
  return where(lt(x, 0), x, 0.0) - log1p(exp(neg(abs(x))));
}

Tensor hardshrink(const Tensor& x, double lambd) {
  return where(logical_and(ge(x, -lambd), le(x, lambd)), 0.0, x);
}
// NaN goes to 0 (neither comparison holds), as in PyTorch's kernel.
Tensor softshrink(const Tensor& x, double lambd) {
  EMBER_CHECK(lambd >= 0, "softshrink: lambda must be greater or equal to 0, but found to be {}", lambd);
  return where(gt(x, lambd), x - lambd, where(lt(x, -lambd), x + lambd, 0.0));
}
Tensor tanhshrink(const Tensor& x) { return x - tanh(x); }
Tensor softsign(const Tensor& x) { return x / (abs(x) + 1); }
Tensor mish(const Tensor& x) {
  check_float(x, "mish");
  return x * tanh(softplus(x));
}
Tensor softmin(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  // PyTorch negates in the input's dtype, then softmax casts: (-x).softmax(dim, dtype).
  return softmax(neg(x), dim, dtype);
}

Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, int64_t dim, Generator* gen) {
  check_float(logits, "gumbel_softmax");
  // -log(E) with E ~ Exp(1) = -log(-log1p(-U)), U ~ U[0, 1).
  Tensor u = rand_like(logits, gen);
  Tensor gumbels = neg(log(neg(log1p(neg(u)))));
  Tensor y = softmax((logits + gumbels) / tau, dim);
  if (!hard) return y;
  int64_t d = wrap_dim(dim, logits.dim(), "gumbel_softmax");
  Tensor index = argmax(y, d, true);
  Tensor y_hard = scatter(zeros_like(logits), d, index, 1.0);
  return y_hard - y.detach() + y;
}

// ---- in-place forms ----
Tensor& threshold_(Tensor& x, double threshold, double value) {
  return write_into(x, "threshold_", [&](const Tensor& t) { return ember::threshold(t, threshold, value); });
}
Tensor& hardtanh_(Tensor& x, double min_val, double max_val) {
  return write_into(x, "hardtanh_", [&](const Tensor& t) { return hardtanh(t, min_val, max_val); });
}
Tensor& elu_(Tensor& x, double alpha) {
  return write_into(x, "elu_", [&](const Tensor& t) { return elu(t, alpha); });
}
Tensor& leaky_relu_(Tensor& x, double negative_slope) {
  return write_into(x, "leaky_relu_", [&](const Tensor& t) { return leaky_relu(t, negative_slope); });
}
Tensor& celu_(Tensor& x, double alpha) {
  return write_into(x, "celu_", [&](const Tensor& t) { return celu(t, alpha); });
}
Tensor& selu_(Tensor& x) {
  return write_into(x, "selu_", [](const Tensor& t) { return selu(t); });
}
Tensor& rrelu_(Tensor& x, double lower, double upper, bool training, Generator* gen) {
  return write_into(x, "rrelu_", [&](const Tensor& t) { return rrelu(t, lower, upper, training, gen); });
}

}  // namespace ember

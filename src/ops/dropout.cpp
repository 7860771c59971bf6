// dropout1d / dropout3d (channel dropout, over dropout2d's masks) and
// alpha_dropout (PyTorch's _dropout_impl with is_alpha_dropout), and the
// in-place forms dropout_ and alpha_dropout_.
#include "ember/ops/dropout.h"

#include <cmath>

#include "ember/ops/activation.h"
#include "ember/ops/factory.h"
#include "ops/grad_utils.h"
#include "ops/op_util.h"

namespace ember {
namespace {

Tensor channel_dropout(const Tensor& x, double p, bool training, Generator* gen, int64_t spatial, const char* op) {
  EMBER_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2,
              "{}: Expected {}D or {}D input, but received a {}D input (shape {})", op, spatial + 1, spatial + 2,
              x.dim(), shape_str(x.sizes()));
  EMBER_CHECK(p >= 0 && p <= 1, "{}: dropout probability has to be between 0 and 1, but got {}", op, p);
  bool batched = x.dim() == spatial + 2;
  Tensor out = dropout2d(batched ? x : x.unsqueeze(0), p, training, gen);
  return batched ? out : out.squeeze(0);
}

}  // namespace

Tensor dropout1d(const Tensor& x, double p, bool training, Generator* gen) {
  return channel_dropout(x, p, training, gen, 1, "dropout1d");
}

Tensor dropout3d(const Tensor& x, double p, bool training, Generator* gen) {
  return channel_dropout(x, p, training, gen, 3, "dropout3d");
}

Tensor alpha_dropout(const Tensor& x, double p, bool training, Generator* gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "alpha_dropout: dropout probability has to be between 0 and 1, but got {}", p);
  if (!training || p == 0 || x.numel() == 0) return x;  // the identity takes any dtype, as PyTorch's
  EMBER_CHECK_TYPE(x.is_floating_point(), "alpha_dropout: expected a floating-point tensor, got {}",
                   to_string(x.dtype()));
  if (p == 1) return x * zeros({}, TensorOptions(x.dtype()));
  // alpha = -SELU's scale * alpha: the value SELU saturates to.
  const double alpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  Tensor keep = bernoulli(zeros(x.sizes(), TensorOptions(x.dtype())), 1 - p, gen);
  Tensor b = (keep - 1) * (alpha * a) + alpha * a * p;
  return x * (keep * a) + b;
}

Tensor& dropout_(Tensor& x, double p, bool training, Generator* gen) {
  return write_into(x, "dropout_", [&](const Tensor& t) { return dropout(t, p, training, gen); });
}

Tensor& alpha_dropout_(Tensor& x, double p, bool training, Generator* gen) {
  return write_into(x, "alpha_dropout_", [&](const Tensor& t) { return alpha_dropout(t, p, training, gen); });
}

}  // namespace ember

// Gradient clipping by joint norm or by value (PyTorch 1.13's formulas).
#include "ember/optim/clip_grad.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"

namespace ember::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (Tensor g = p.grad(); g.defined()) grads.push_back(g);
  if (grads.empty()) return scalar_tensor(0.0, kFloat32);
  // Per-tensor norms first, then the norm of those: equal to the norm of all
  // elements together, and what PyTorch computes (so rounding matches too).
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  Tensor total;
  if (std::isinf(norm_type)) {
    for (const Tensor& g : grads) norms.push_back(amax(abs(g)));
    total = norms.size() == 1 ? norms[0] : amax(stack(norms));
  } else {
    for (const Tensor& g : grads) norms.push_back(norm(g, norm_type));
    total = norm(stack(norms), norm_type);
  }
  const double total_value = total.item<double>();
  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total_value),
              "The total norm of order {} for gradients from `parameters` is non-finite ({}), so it cannot be "
              "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`",
              norm_type, total_value);
  // clip_coef = max_norm / (total + 1e-6), clamped at 1; applied even when
  // it is 1 (a no-op), as in PyTorch 1.13.
  Tensor coef = clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
  for (Tensor& g : grads) g.mul_(coef.to(g.dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : params)
    if (Tensor g = p.grad(); g.defined()) g.clamp_(-clip_value, clip_value);
}

}  // namespace ember::optim

// AccumulateGrad::apply: a leaf's gradient accumulation. It is written in
// tensor ops and its vtable is needed wherever record() builds the graph
// (core), so it sits in the ops layer rather than with the engine:
// libember_runtime.so links ops without src/autograd.
#include "ember/core/grad_graph.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"

namespace ember {

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  AutogradLeafState& m = materialize_autograd_meta(variable).leaf();
  for (const GradHook& hook : m.leaf_hooks) {
    Tensor r = hook(g);
    if (r.defined()) g = std::move(r);
  }
  if (g.dtype() != variable.dtype()) g = g.to(variable.dtype());
  bool owned = g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous();
  if (!m.grad.defined()) {
    // Keep the engine's tensor when nobody else can see it; copy otherwise so
    // grad() never aliases another gradient or a user's tensor.
    m.grad = (owned || GradMode::is_enabled()) ? g : g.clone();
  } else if (GradMode::is_enabled()) {
    m.grad = m.grad + g;  // create_graph: keep the accumulation differentiable
  } else {
    NoGradGuard no_grad;
    m.grad.add_(g);
  }
  return {};
}

}  // namespace ember

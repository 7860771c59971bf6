// Tensor's autograd metadata accessors (requires_grad, requires_grad_,
// grad_fn, output_nr, detach). The ops layer calls them on every op that may
// record, so they live with the graph data in core rather than with the
// engine in src/autograd: libember_runtime.so links ops without the engine.
#include "ember/core/grad_graph.h"
#include "ember/core/tensor.h"
#include "ember/core/tensor_impl.h"

namespace ember {

bool Tensor::requires_grad() const {
  auto* meta = checked().autograd_meta();
  return meta != nullptr && meta->requires_grad();
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  AutogradMeta* m = autograd_meta(*this);
  EMBER_CHECK(!(m && m->grad_fn_),
              "requires_grad_: you can only change requires_grad flags of leaf variables. If you want to "
              "use a computed variable in a subgraph that doesn't require differentiation use "
              "var_no_grad = var.detach().");
  EMBER_CHECK(!requires_grad || is_floating_point(),
              "requires_grad_: only Tensors of floating point dtype can require gradients, got {}",
              to_string(dtype()));
  if (!m && !requires_grad) return *this;
  AutogradMeta& meta = materialize_autograd_meta(*this);
  meta.requires_grad_ = requires_grad;
  // Built now, on the user's thread, rather than by the first op that takes
  // this leaf as input (ops on several threads may share a leaf).
  if (requires_grad) meta.leaf();
  return *this;
}

std::shared_ptr<Node> Tensor::grad_fn() const {
  AutogradMeta* m = autograd_meta(*this);
  return m ? m->grad_fn_ : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = autograd_meta(*this);
  return m ? m->output_nr_ : 0;
}

Tensor Tensor::detach() const {
  return Tensor(make_intrusive<TensorImpl>(storage(), dtype(), DimVector(sizes()), DimVector(strides()),
                                           storage_offset()));
}

}  // namespace ember

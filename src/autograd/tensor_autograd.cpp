// Tensor's autograd methods: requires_grad_, grad, backward, detach, hooks.
#include "ember/autograd/autograd.h"

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

bool Tensor::is_leaf() const {
  AutogradMeta* m = autograd_meta(*this);
  return !m || !m->grad_fn_;
}

Tensor Tensor::grad() const {
  AutogradMeta* m = autograd_meta(*this);
  if (!m || !m->leaf_) return Tensor();
  if (m->leaf_->retained) return m->leaf_->retained->grad;
  return m->leaf_->grad;
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined())
    EMBER_CHECK(g.sizes().equals(sizes()), "set_grad: assigned grad has shape [{}] but the tensor has [{}]",
                fmt::join(g.sizes(), ", "), fmt::join(sizes(), ", "));
  AutogradLeafState& leaf = materialize_autograd_meta(*this).leaf();
  if (leaf.retained) leaf.retained->grad = g;
  else leaf.grad = g;
}

std::shared_ptr<Node> Tensor::grad_fn() const {
  AutogradMeta* m = autograd_meta(*this);
  return m ? m->grad_fn_ : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = autograd_meta(*this);
  return m ? m->output_nr_ : 0;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, gradient.defined() ? variable_list{gradient} : variable_list{}, retain_graph,
                     create_graph);
}

Tensor Tensor::detach() const {
  return Tensor(make_intrusive<TensorImpl>(storage(), dtype(), DimVector(sizes()), DimVector(strides()),
                                           storage_offset()));
}

Tensor& Tensor::detach_() {
  if (AutogradMeta* m = autograd_meta(*this)) {
    EMBER_CHECK(!m->is_view_, "detach_: can't detach a view in place; use detach() instead");
    m->grad_fn_.reset();
    m->requires_grad_ = false;
    m->output_nr_ = 0;
  }
  return *this;
}

void Tensor::retain_grad() const {
  AutogradMeta* m = autograd_meta(*this);
  EMBER_CHECK(m && m->requires_grad(), "retain_grad: can't retain_grad on Tensor that has requires_grad=False");
  if (!m->grad_fn_ || (m->leaf_ && m->leaf_->retained)) return;  // leaves keep their grad anyway
  m->leaf().retained = std::make_shared<RetainedGrad>();
  std::weak_ptr<RetainedGrad> slot = m->leaf_->retained;
  m->grad_fn_->add_pre_hook(m->output_nr_, [slot](const Tensor& g) {
    if (auto s = slot.lock()) s->grad = s->grad.defined() ? s->grad + g : g.detach().clone();
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = autograd_meta(*this);
  return m && m->leaf_ && m->leaf_->retained != nullptr;
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  AutogradMeta* m = autograd_meta(*this);
  EMBER_CHECK(m && m->requires_grad(),
              "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  if (m->grad_fn_) m->grad_fn_->add_pre_hook(m->output_nr_, std::move(hook));
  else m->leaf().leaf_hooks.push_back(std::move(hook));
}

}  // namespace ember

// Tensor's autograd methods: grad, backward, hooks. The metadata accessors the ops
// layer reads (requires_grad, grad_fn, output_nr, detach) are in
// src/core/tensor_grad_meta.cpp, so the runtime library links no engine.
#include "ember/autograd/autograd.h"

namespace ember {

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

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, gradient.defined() ? variable_list{gradient} : variable_list{}, retain_graph,
                     create_graph);
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

// sum_to, grad_for and the in-place autograd path.
#include "ops/grad_utils.h"

#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {

void GradTarget::keep_shape(const DimVector& shape) { shape_ = std::make_shared<const DimVector>(shape); }

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes().equals(shape)) return g;
  int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  DimVector dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && g.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  if (lead > 0) r = r.reshape(shape);
  return r;
}

Tensor grad_for(const Tensor& g, const Tensor& input) {
  if (!g.defined()) return g;
  return grad_for(g, input.sizes(), input.dtype());
}

Tensor& write_into(Tensor& x, const char* op, const std::function<Tensor(const Tensor&)>& compute) {
  if (any_requires_grad({&x})) return inplace_with_grad(x, op, compute);
  return x.copy_(compute(x));
}

Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& compute) {
  check_inplace(self, op);
  // A tensor that already requires grad has its views tracked (Note [views
  // and autograd]); a plain buffer's views are not, so writing a history into
  // a buffer that shares storage would leave them silently stale.
  EMBER_CHECK(self.requires_grad() || self.storage().use_count() == 1,
              "{}: an in-place op whose result requires grad on a tensor that shares storage with other "
              "tensors (a view, its base, or a saved output) is not supported; use the out-of-place op",
              op);
  // The op reads a copy of the old value, so nothing saved for backward is
  // overwritten below.
  Tensor old = self.requires_grad() ? self.clone() : self.detach().clone();
  Tensor r = compute(old);
  if (r.dtype() != self.dtype()) r = r.to(self.dtype());
  {
    NoGradGuard no_grad;
    copy_(self, r);
  }
  set_history(self, r.grad_fn(), r.output_nr());
  return self;
}

}  // namespace ember

// clone, copy_, fill_ and dtype/device conversion.
#include "ember/core/grad_graph.h"
#include "ember/ops/factory.h"
#include "ops/grad_utils.h"
#include "ember/ops/view.h"
#include "kernels/kernel_types.h"
#include "ops/trace_util.h"

namespace ember {

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  {
    NoGradGuard no_grad;
    copy_(out, t);
  }
  if (any_requires_grad({&t}))
    record("CloneBackward0", {&t}, out, [](const variable_list& g) -> variable_list { return {g[0]}; });
  return out;
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return dst;
  if (any_requires_grad({&dst, &src})) {
    check_inplace(dst, "copy_");
    EMBER_CHECK(dst.storage().use_count() == 1,
                "copy_: copying a tensor that requires grad into a tensor that shares storage with others (a "
                "view or its base) is not supported under autograd; build the result out of place (cat, "
                "stack, where) instead");
    {
      NoGradGuard no_grad;
      copy_(dst, src);
    }
    record("CopyBackwards", {&src}, dst,
           [in = DimVector(src.sizes()), dt = src.dtype()](const variable_list& g) -> variable_list {
             return {grad_for(g[0], in, dt)};
           });
    return dst;
  }
  // Broadcast src to dst's shape (dst itself never broadcasts).
  TensorIter iter({&dst, &src}, 1, "copy_");
  run_elementwise(Op::copy, iter, {}, dst.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(Op::copy, dst, &src);
  dst.bump_version();
  return dst;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty(t.sizes(), TensorOptions(dtype).device(t.device()));
  {
    NoGradGuard no_grad;
    copy_(out, t);
  }
  if (any_requires_grad({&t}) && is_floating_point(dtype))
    record("ToCopyBackward0", {&t}, out, [src = t.dtype()](const variable_list& g) -> variable_list {
      return {g[0].to(src)};
    });
  return out;
}

Tensor& Tensor::fill_(const Scalar& v) {
  if (any_requires_grad({this})) {
    check_inplace(*this, "fill_");
    {
      NoGradGuard no_grad;
      fill_(v);
    }
    // The old value no longer matters: the gradient to it is zero.
    record("FillBackward0", {this}, *this, [](const variable_list&) -> variable_list { return {Tensor()}; });
    return *this;
  }
  TensorIter iter({this}, 1, "fill_");
  run_elementwise(Op::fill, iter, {v, std::nullopt}, device());
  if (trace_hook()) [[unlikely]] trace_fill(*this, v);
  bump_version();
  return *this;
}

Tensor& Tensor::fill_(const Tensor& v) {
  EMBER_CHECK(v.dim() == 0, "fill_: only supports a 0-dim value tensor, got one with {} dims", v.dim());
  return fill_(v.item());
}

Tensor& Tensor::zero_() { return fill_(0); }
Tensor& Tensor::copy_(const Tensor& src) { return ember::copy_(*this, src); }
Tensor Tensor::clone() const { return ember::clone(*this); }
Tensor Tensor::contiguous() const { return ember::contiguous(*this); }

Tensor Tensor::to(ScalarType dtype, bool copy) const { return to_dtype(*this, dtype, copy); }

Tensor Tensor::to(Device device, bool copy) const {
  check_device_available(device);
  return copy ? clone() : *this;  // CPU is the only device in this build
}

Tensor Tensor::to(Device device, ScalarType dtype, bool copy) const {
  check_device_available(device);
  return to(dtype, copy);
}

}  // namespace ember

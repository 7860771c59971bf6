// clone, copy_, fill_ and dtype/device conversion.
#include "ember/ops/factory.h"
#include "ember/ops/view.h"
#include "kernels/kernel_types.h"

namespace ember {

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  copy_(out, t);
  return out;
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return dst;
  // Broadcast src to dst's shape (dst itself never broadcasts).
  TensorIter iter({&dst, &src}, 1, "copy_");
  run_elementwise(Op::copy, iter, {}, dst.device());
  dst.bump_version();
  return dst;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty(t.sizes(), TensorOptions(dtype).device(t.device()));
  copy_(out, t);
  return out;
}

Tensor& Tensor::fill_(const Scalar& v) {
  TensorIter iter({this}, 1, "fill_");
  run_elementwise(Op::fill, iter, {v, std::nullopt}, device());
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

#include "jit/ir/arange.h"

#include "kernels/dispatch.h"

namespace ember::jit {

void write_arange(Tensor& out, const Scalar& start, const Scalar& step) {
  const bool integral = !start.is_floating_point() && !step.is_floating_point();
  const int64_t n = out.numel();
  dispatch_numeric(out.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data_ptr<T>();
    if (integral) {
      const int64_t s0 = start.to_long(), st = step.to_long();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s0 + i * st);
    } else {
      const double s0 = start.to_double(), st = step.to_double();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s0 + static_cast<double>(i) * st);
    }
  });
}

}  // namespace ember::jit

// torch.inverse / torch.linalg.inv over a batch of square matrices, and its
// derivative d(A^-1) = -A^-1 dA A^-1.
#include "ember/core/grad_graph.h"
#include "ember/core/trace_hook.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ember/ops/view.h"
#include "kernels/linalg.h"
#include "ops/op_util.h"

namespace ember {

Tensor inverse(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 2, "linalg.inv: The input tensor A must have at least 2 dimensions, got shape {}",
              shape_str(t.sizes()));
  EMBER_CHECK(t.size(-1) == t.size(-2), "linalg.inv: A must be batches of square matrices, but they are {} by {} matrices",
              t.size(-2), t.size(-1));
  EMBER_CHECK_TYPE(is_floating_point(t.dtype()), "linalg.inv: Expected a floating point tensor as input. Got {}",
                   to_string(t.dtype()));
  EMBER_CHECK_TYPE(t.dtype() == kFloat32 || t.dtype() == kFloat64,
                   "linalg.inv: Low precision dtypes not supported. Got {}", to_string(t.dtype()));
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->unsupported("inverse", "a matrix inverse is not supported by the tracer yet");
  const int64_t n = t.size(-1);
  Tensor a = t.contiguous();
  Tensor out = empty(t.sizes(), t.dtype());
  const int64_t batch = n == 0 ? 0 : t.numel() / (n * n);
  InverseFailure bad = invert_matrices(t.dtype(), a.data_ptr(), out.data_ptr(), batch, n);
  if (bad.batch >= 0) {
    // PyTorch's words (LAPACK's info > 0), with the batch element when batched.
    std::string where = t.dim() > 2 ? fmt::format("(Batch element {}): ", bad.batch) : "";
    EMBER_ERROR("linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because the "
                "input matrix is singular.",
                where, bad.pivot);
  }
  if (any_requires_grad({&t})) {
    SavedTensor so = save_output(out);
    record("LinalgInvExBackward0", {&t}, {so}, out, [so](const variable_list& g) -> variable_list {
      Tensor inv_t = so.unpack().mT();
      return {neg(matmul(matmul(inv_t, g[0]), inv_t))};
    });
  }
  return out;
}

Tensor linalg_inv(const Tensor& t) { return inverse(t); }

Tensor Tensor::inverse() const { return ember::inverse(*this); }

}  // namespace ember

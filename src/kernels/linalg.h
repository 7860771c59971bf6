// Kernel signature of Op::matmul: one strided, batched GEMM that every
// linalg op (mm, bmm, matmul, addmm, linear, dot, outer) lowers to.
#pragma once

#include <cstdint>

#include "core/op_registry.h"
#include "ember/core/scalar.h"
#include "ember/core/scalar_type.h"

namespace ember {

// A batch of matrices in memory: element (b, i, j) sits at
// data + b * batch_stride + i * row_stride + j * col_stride (in elements).
// batch_stride 0 broadcasts one matrix over the whole batch.
struct MatrixRef {
  void* data = nullptr;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

// Note [gemm contract]: for every b < batch,
//   c[b] = alpha * (a[b] @ b[b] + bias) + beta * c[b]
// with a[b] [m, k], b[b] [k, n], c[b] [m, n]; bias (optional) is a row of n
// elements (stride bias_stride) added to every row. alpha scales the bias
// too because that is what oneDNN's output scale does; callers pass a bias
// only with alpha == 1. beta == 0 ignores c's old values (NaN included), as
// BLAS and torch.addmm do. All operands have `dtype`, except that with
// float32_c a and b are bfloat16 and c and bias float32 (native bf16
// autocast); the caller guarantees c does not overlap a, b or bias.
// Accumulation is in float for float32 and the 16-bit floats, double for
// float64, int64 for integers.
struct GemmArgs {
  ScalarType dtype = ScalarType::Float32;
  bool float32_c = false;
  ScalarType c_dtype() const { return float32_c ? ScalarType::Float32 : dtype; }
  int64_t batch = 1, m = 0, n = 0, k = 0;
  MatrixRef a, b, c;
  const void* bias = nullptr;
  int64_t bias_stride = 1;
  Scalar alpha = 1, beta = 0;
};

using MatmulKernel = void(const GemmArgs& args);

inline void run_matmul(const GemmArgs& args, Device device) {
  get_kernel<MatmulKernel>(Op::matmul, device)(args);
}

// Note [matrix inverse]: inverts `batch` contiguous row-major n x n
// matrices of dtype (float32 or float64) from `in` into `out`, by
// Gauss-Jordan elimination with partial pivoting accumulated in double (the
// pivots are LAPACK getrf's, so a matrix is singular exactly when getrf
// says so). The batch runs in parallel.
struct InverseFailure {
  int64_t batch = -1;  // the first singular matrix, -1 when none
  int64_t pivot = 0;   // its 1-based zero pivot (LAPACK's info)
};
InverseFailure invert_matrices(ScalarType dtype, const void* in, void* out, int64_t batch, int64_t n);

// The plain reference loop: every dtype but bool (no float32_c). It serves float64 and the
// integers in production and is what tests compare the oneDNN path against.
void matmul_ref(const GemmArgs& args);

}  // namespace ember

// Kernel signatures for the Reduce family (see core/ops.def) and for the
// scan/softmax kernels that share its [outer, reduce, inner] geometry.
//
// Note [ReduceIter]: the ops layer brings every reduction into one shape: a
// contiguous input block viewed as [outer, reduce, inner] (row-major), with
// the `reduce` axis summed away, and a contiguous output [outer, inner].
//   inner == 1   -> "inner reduction": each output reduces one contiguous row.
//   inner > 1    -> "outer reduction": each output row accumulates `reduce`
//                   rows of `inner` contiguous elements (vectorizes across j).
// Input element (o, r, j) lives at in[(o * reduce + r) * inner + j]; output
// element (o, j) at out[o * inner + j]. Inputs that cannot be viewed this way
// are permuted to [kept..., reduced...] and copied (then inner == 1).
#pragma once

#include <cstdint>

#include "core/op_registry.h"
#include "ember/core/scalar_type.h"

namespace ember {

struct ReduceIter {
  const char* op = "";
  const void* in = nullptr;
  ScalarType in_dtype = kFloat32;
  void* out = nullptr;  // main result (values, var, ...)
  ScalarType out_dtype = kFloat32;
  // Second result: int64 indices for argmax/argmin (then `out` holds the
  // values, or is null), the mean for var (null when not wanted).
  void* out2 = nullptr;
  int64_t outer = 1, reduce = 1, inner = 1;
};

// Scalar parameters; each kernel reads the fields it needs.
struct ReduceParams {
  double scale = 1;       // sum: multiplies the result (mean = sum * 1/n)
  double p = 2;           // norm order
  double correction = 1;  // var: divisor is n - correction
  bool take_sqrt = false; // var: return the standard deviation
};

using ReduceKernel = void(const ReduceIter& iter, const ReduceParams& params);

// cumsum: in and out are contiguous [outer, reduce, inner] blocks of the same
// shape and dtype; the scan runs along `reduce`.
using ScanKernel = void(const ReduceIter& iter);

// softmax / log_softmax along `reduce` of a contiguous floating block; out has
// the input's shape and dtype.
using SoftmaxKernel = void(const ReduceIter& iter, bool log);

inline void run_reduce(Op op, const ReduceIter& iter, const ReduceParams& p, Device d) {
  get_kernel<ReduceKernel>(op, d)(iter, p);
}

}  // namespace ember

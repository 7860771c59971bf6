// normalize, cosine_similarity, pairwise_distance, pdist, cdist as
// composites: their gradients come from norm's and the arithmetic's.
#include "ember/ops/distance.h"

#include <algorithm>

#include "ops/op_util.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {
namespace {

void check_float(const Tensor& t, const char* op, const char* arg) {
  EMBER_CHECK_TYPE(t.is_floating_point(), "{}: expected a floating-point {}, got {}", op, arg, to_string(t.dtype()));
}

}  // namespace

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  check_float(input, "normalize", "input");
  dim = wrap_dim(dim, input.dim(), "normalize");
  return input / clamp_min(norm(input, p, {dim}, true), eps);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  check_float(x1, "cosine_similarity", "x1");
  check_float(x2, "cosine_similarity", "x2");
  std::vector<Tensor> b = broadcast_tensors({x1, x2});
  dim = wrap_dim(dim, b[0].dim(), "cosine_similarity");
  // Each vector is divided by its own (clamped) norm before the dot product,
  // as PyTorch does: no overflow of |x1|^2 |x2|^2 for large inputs.
  Tensor n1 = clamp_min(norm(b[0], 2, {dim}, true), eps);
  Tensor n2 = clamp_min(norm(b[1], 2, {dim}, true), eps);
  return sum((b[0] / n1) * (b[1] / n2), {dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  // Integer inputs subtract exactly and become floating point with + eps, as in PyTorch.
  int64_t out_dim = std::max(x1.dim(), x2.dim());
  EMBER_CHECK(out_dim >= 1, "pairwise_distance: expected inputs with at least 1 dim, got {} and {}",
              shape_str(x1.sizes()), shape_str(x2.sizes()));
  return norm(x1 - x2 + eps, p, {out_dim - 1}, keepdim);
}

Tensor pdist(const Tensor& input, double p) {
  EMBER_CHECK(input.dim() == 2, "pdist: only supports 2D tensors, got: {}D (shape {})", input.dim(),
              shape_str(input.sizes()));
  check_float(input, "pdist", "input");
  EMBER_CHECK(p >= 0, "pdist: only supports non-negative p values, got {}", p);
  int64_t n = input.size(0);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      rows.push_back(i);
      cols.push_back(j);
    }
  int64_t pairs = static_cast<int64_t>(rows.size());
  if (pairs == 0) return zeros({0}, TensorOptions(input.dtype()));
  Tensor a = index_select(input, 0, tensor<int64_t>(rows, {pairs}));
  Tensor b = index_select(input, 0, tensor<int64_t>(cols, {pairs}));
  return norm(a - b, p, {1});
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  EMBER_CHECK(x1.dim() >= 2 && x2.dim() >= 2, "cdist: only supports at least 2D tensors, X1 got: {}D, X2 got: {}D",
              x1.dim(), x2.dim());
  check_float(x1, "cdist", "x1");
  check_float(x2, "cdist", "x2");
  EMBER_CHECK(x1.size(-1) == x2.size(-1),
              "cdist: X1 and X2 must have the same number of columns. X1: {} X2: {}", x1.size(-1), x2.size(-1));
  EMBER_CHECK(p >= 0, "cdist: only supports non-negative p values, got {}", p);
  // [*, P, 1, M] - [*, 1, R, M]: every pair, then the norm over M.
  return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
}

}  // namespace ember

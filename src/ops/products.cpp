// Matrix-product composites over mm/bmm/matmul: mv, addmv, addr, addbmm,
// baddbmm, inner, matrix_power, and the Tensor methods of the products.
#include <limits>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/tensor_iter.h"
#include "ops/op_util.h"

namespace ember {
namespace {

void check_rank(const Tensor& t, int64_t rank, const char* op, const char* arg) {
  EMBER_CHECK(t.dim() == rank, "{}: expected {} to be a {}-D tensor, got shape {}", op, arg, rank,
              shape_str(t.sizes()));
}

// beta * input + alpha * product, with PyTorch's rules: input broadcasts to
// the product's shape (never the other way), and beta == 0 ignores input,
// NaN and inf included.
Tensor add_scaled(const Tensor& input, const Tensor& product, const Scalar& beta_arg, const Scalar& alpha_arg,
                  const char* op) {
  // Integer products take beta and alpha cast to their dtype (PyTorch's
  // addmv/addbmm/baddbmm; addr refuses floating ones first).
  const Scalar beta = scalar_in(beta_arg, product.dtype()), alpha = scalar_in(alpha_arg, product.dtype());
  DimVector b = broadcast_shapes(input.sizes(), product.sizes(), op);
  EMBER_CHECK(IntArrayRef(b).equals(product.sizes()),
              "{}: input of shape {} cannot be broadcast to the product's shape {}", op, shape_str(input.sizes()),
              shape_str(product.sizes()));
  Tensor scaled = alpha.to_double() == 1.0 ? product : mul(product, alpha);
  if (beta.to_double() == 0.0) return scaled;
  return add(beta.to_double() == 1.0 ? input : mul(input, beta), scaled);
}

}  // namespace

Tensor mv(const Tensor& mat, const Tensor& vec) {
  check_rank(mat, 2, "mv", "mat");
  check_rank(vec, 1, "mv", "vec");
  EMBER_CHECK(mat.size(1) == vec.size(0), "mv: size mismatch, got mat ({}x{}), vec ({})", mat.size(0), mat.size(1),
              vec.size(0));
  return matmul(mat, vec);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  check_rank(mat, 2, "addmv", "mat");
  check_rank(vec, 1, "addmv", "vec");
  EMBER_CHECK(mat.size(1) == vec.size(0), "addmv: size mismatch, got input ({}), mat ({}x{}), vec ({})",
              shape_str(input.sizes()), mat.size(0), mat.size(1), vec.size(0));
  return add_scaled(input, matmul(mat, vec), beta, alpha, "addmv");
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  check_rank(vec1, 1, "addr", "vec1");
  check_rank(vec2, 1, "addr", "vec2");
  // Unlike addmv and addmm, PyTorch's addr refuses floating scalars on integer vectors.
  if (is_integral(result_type(vec1, vec2), true))
    for (const auto& [name, v] : {std::pair{"beta", beta}, std::pair{"alpha", alpha}})
      EMBER_CHECK(!v.is_floating_point(),
                  "addr: For integral input tensors, argument {} must not be a floating point number.", name);
  return add_scaled(input, outer(vec1, vec2), beta, alpha, "addr");
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  check_rank(batch1, 3, "baddbmm", "batch1");
  check_rank(batch2, 3, "baddbmm", "batch2");
  return add_scaled(input, bmm(batch1, batch2), beta, alpha, "baddbmm");
}

Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha) {
  check_rank(batch1, 3, "addbmm", "batch1");
  check_rank(batch2, 3, "addbmm", "batch2");
  Tensor products = bmm(batch1, batch2);
  // Summed in the products' dtype: an int32 addbmm stays int32 (sum alone would widen to int64).
  return add_scaled(input, sum(products, {0}, false, products.dtype()), beta, alpha, "addbmm");
}

Tensor inner(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  EMBER_CHECK(a.size(-1) == b.size(-1),
              "inner() the last dimension must match on both input tensors but got shapes {} and {}",
              shape_str(a.sizes()), shape_str(b.sizes()));
  return tensordot(a, b, {-1}, {-1});
}

// Repeated squaring: ceil(log2 |n|) + popcount(|n|) products.
Tensor matrix_power(const Tensor& t, int64_t n) {
  EMBER_CHECK(t.dim() >= 2 && t.size(-1) == t.size(-2),
              "matrix_power: expected a tensor of square matrices [*, n, n], got shape {}", shape_str(t.sizes()));
  // A^-n = (A^-1)^n, as PyTorch computes it (and with its errors: integer
  // and singular matrices are refused by linalg.inv).
  if (n < 0) {
    EMBER_CHECK(n != std::numeric_limits<int64_t>::min(), "matrix_power: n = {} has no positive counterpart", n);
    return matrix_power(inverse(t), -n);
  }
  // n = 0: identities, still connected to t (a zero gradient), as in PyTorch.
  if (n == 0)
    return where(full(t.sizes(), true, kBool), eye(t.size(-1), std::nullopt, t.dtype()).expand(t.sizes()), t);
  Tensor result, base = t;
  while (true) {
    if (n & 1) result = result.defined() ? matmul(result, base) : base;
    n >>= 1;
    if (n == 0) break;
    base = matmul(base, base);
  }
  return result.is_same(t) ? t.clone() : result;
}

// ---- Tensor methods ----
Tensor Tensor::mv(const Tensor& vec) const { return ember::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& o) const { return ember::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return ember::outer(*this, o); }
Tensor Tensor::inner(const Tensor& o) const { return ember::inner(*this, o); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) const {
  return ember::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addr(*this, vec1, vec2, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) const {
  return ember::baddbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::matrix_power(int64_t n) const { return ember::matrix_power(*this, n); }

// In-place forms: the out-of-place result copied into self (copy_ records
// the history and bumps the version).
Tensor& Tensor::addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
  return copy_(ember::addmm(*this, m1, m2, beta, alpha));
}
Tensor& Tensor::addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  return copy_(ember::addmv(*this, mat, vec, beta, alpha));
}
Tensor& Tensor::addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  return copy_(ember::addr(*this, vec1, vec2, beta, alpha));
}
Tensor& Tensor::addbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
  return copy_(ember::addbmm(*this, b1, b2, beta, alpha));
}
Tensor& Tensor::baddbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
  return copy_(ember::baddbmm(*this, b1, b2, beta, alpha));
}

}  // namespace ember

// Matrix products (torch.matmul, mm, bmm, addmm, linear, dot, outer): shape
// and dtype rules; each lowers to one batched GEMM (Note [gemm contract]).
#include "ember/ops/linalg.h"

#include <optional>
#include <string>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"
#include "kernels/linalg.h"

#include "ember/core/grad_graph.h"
#include "ember/ops/reduction.h"
#include "ops/grad_utils.h"
#include "ops/autocast_util.h"
#include "ops/gemm.h"
#include "ops/op_util.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {

// "2x3", PyTorch's spelling of a matrix shape in mm errors.
std::string mat_str(const Tensor& t) { return fmt::format("{}", fmt::join(t.sizes(), "x")); }
std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void check_dtypes(const char* op, const Tensor& a, const Tensor& b, const char* na, const char* nb) {
  EMBER_CHECK(a.dtype() == b.dtype(),
              "{}: expected {} and {} to have the same dtype, but got: {} != {}; convert one with "
              ".to(dtype)",
              op, na, nb, to_string(a.dtype()), to_string(b.dtype()));
  EMBER_CHECK_TYPE(a.dtype() != kBool, "{}: dtype bool is not supported (expected a numeric dtype)",
                   op);
  EMBER_CHECK(a.device() == b.device(),
              "{}: expected {} and {} on the same device, but got {} and {}", op, na, nb,
              a.device().str(), b.device().str());
}

void check_dim(const char* op, const Tensor& t, int64_t dim, const char* name) {
  EMBER_CHECK(t.dim() == dim, "{}: expected {} to be a {}-D tensor, but got a {}-D tensor of shape {}",
              op, name, dim, t.dim(), shape_str(t));
}


// The stride of dims [begin, end) of t merged into one, or nullopt when no
// single stride walks them (then a copy is needed). Size-1 dims never matter.
std::optional<int64_t> merged_stride(const Tensor& t, int64_t begin, int64_t end) {
  std::optional<int64_t> inner;  // stride of the innermost non-1 dim seen
  int64_t span = 1;              // elements covered by the dims after it
  for (int64_t d = end - 1; d >= begin; --d) {
    int64_t size = t.size(d), stride = t.stride(d);
    if (size == 1) continue;
    if (!inner) {
      inner = stride;
    } else if (stride != *inner * span) {
      return std::nullopt;
    }
    span *= size;
  }
  return inner.value_or(0);
}

// t with dims [0, nb) merged into one leading batch dim: [B, rows, cols],
// a view when strides allow, a copy otherwise.
Tensor merge_batch(const Tensor& t, int64_t nb) {
  int64_t B = 1;
  for (int64_t d = 0; d < nb; ++d) B *= t.size(d);
  int64_t r = t.size(nb), c = t.size(nb + 1);
  if (auto bs = merged_stride(t, 0, nb))
    return as_strided(t, {B, r, c}, {*bs, t.stride(nb), t.stride(nb + 1)});
  return t.contiguous().view({B, r, c});
}

// A [rows, cols] or [Bt, rows, cols] tensor as the kernel sees it. oneDNN's
// fast kernels need each matrix row- or column-major with a leading
// dimension no smaller than the matrix (x @ w.t() qualifies as is);
// anything else is copied.
struct Operand {
  Tensor keep;  // owns the memory ref points into
  MatrixRef ref;
};

Operand make_operand(const Tensor& t) {
  int64_t d = t.dim() - 2;  // 0 or 1: index of the rows dim
  int64_t batch = d ? t.size(0) : 1, rows = t.size(d), cols = t.size(d + 1);
  int64_t rs = t.stride(d), cs = t.stride(d + 1);
  // Strides of size-1 dims are meaningless: pick ones that keep it friendly.
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  bool row_major = cs == 1 && rs >= cols;
  bool col_major = rs == 1 && cs >= rows;
  if (row_major || col_major || rows == 0 || cols == 0)
    return {t, {t.data_ptr(), batch == 1 ? 0 : t.stride(0), rs, cs}};
  Tensor c = t.contiguous();
  return {c, {c.data_ptr(), batch == 1 ? 0 : rows * cols, cols, 1}};
}

}  // namespace

// out (contiguous [M, N] or [B, M, N]) = alpha * (a @ b + bias) + beta * out,
// where a is [M, K] or [B or 1, M, K], b [K, N] or [B or 1, K, N] and bias a
// 1-D [N] tensor or null. (Taking 2-D operands as they are, rather than
// unsqueezed, keeps small-matrix overhead down.)
void gemm(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor* bias,
          const Scalar& alpha, const Scalar& beta) {
  Operand A = make_operand(a), B = make_operand(b);
  int64_t d = out.dim() - 2;
  GemmArgs g;
  g.dtype = a.dtype();
  g.float32_c = out.dtype() != a.dtype();  // bf16 operands, float32 out (linalg_bf16.cpp)
  g.batch = d ? out.size(0) : 1;
  g.m = out.size(d);
  g.n = out.size(d + 1);
  g.k = a.size(-1);
  g.a = A.ref;
  g.b = B.ref;
  g.c = {out.data_ptr(), g.m * g.n, g.n, 1};
  g.alpha = alpha;
  g.beta = beta;
  if (bias) {
    g.bias = bias->data_ptr();
    g.bias_stride = g.n == 1 ? 1 : bias->stride(0);
  }
  // A batch times one shared matrix, with the batch's rows evenly spaced, is
  // one tall GEMM: [B*M, K] @ [K, N] runs faster than B small ones.
  if (g.batch > 1 && g.b.batch_stride == 0 && g.a.col_stride == 1 &&
      g.a.batch_stride == g.m * g.a.row_stride) {
    g.m *= g.batch;
    g.batch = 1;
  }
  run_matmul(g, out.device());
  // beta != 0 reads out's old values: then out is an input too (written in place).
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::matmul, {&a, &b, bias, beta.to_double() != 0 ? &out : nullptr}, {&out},
               {{"alpha", alpha}, {"beta", beta}});
}

namespace {

Tensor empty_out(IntArrayRef sizes, const Tensor& like) {
  return empty(sizes, TensorOptions(like.dtype()).device(like.device()));
}

// Batch dims of a and b broadcast together, or an error naming both shapes.
DimVector broadcast_batch(IntArrayRef ba, IntArrayRef bb, const Tensor& a, const Tensor& b) {
  size_t n = std::max(ba.size(), bb.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - ba.size() ? 1 : ba[i - (n - ba.size())];
    int64_t y = i < n - bb.size() ? 1 : bb[i - (n - bb.size())];
    EMBER_CHECK(x == y || x == 1 || y == 1,
                "matmul: batch dimensions of {} and {} cannot be broadcast together (size {} vs {} "
                "at batch dim {})",
                shape_str(a), shape_str(b), x, y, i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// matmul as a composition of recorded ops (unsqueeze, expand, reshape, mm,
// bmm), so its gradient comes from theirs; used only when grad is needed.
Tensor matmul_differentiable(const Tensor& a, const Tensor& b) {
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  EMBER_CHECK(b2.size(-2) == k,
              "matmul: shapes {} and {} cannot be multiplied: {} != {} (last dim of the first, "
              "second-to-last of the second)",
              shape_str(a), shape_str(b), k, b2.size(-2));
  Tensor out;
  DimVector batch;
  if (b2.dim() == 2) {
    // [..., m, k] @ [k, n]: fold the batch into the rows of one mm.
    for (int64_t d = 0; d + 2 < a2.dim(); ++d) batch.push_back(a2.size(d));
    out = mm(a2.reshape({-1, k}), b2);
  } else {
    IntArrayRef sa = a2.sizes(), sb = b2.sizes();
    batch = broadcast_batch(IntArrayRef(sa.data(), sa.size() - 2), IntArrayRef(sb.data(), sb.size() - 2), a, b);
    DimVector ea(batch), eb(batch);
    ea.push_back(m);
    ea.push_back(k);
    eb.push_back(k);
    eb.push_back(n);
    out = bmm(a2.expand(ea).reshape({-1, m, k}), b2.expand(eb).reshape({-1, k, n}));
  }
  DimVector shape(batch);
  if (a.dim() > 1) shape.push_back(m);
  if (b.dim() > 1) shape.push_back(n);
  return out.reshape(shape);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocasts(a) || autocasts(b)) {
    AutocastGuard off(false);
    if (autocast_native_bf16() && mm_bf16_applies(a, b)) return mm_bf16(a, b);
    return mm(bf16_rounded(a), bf16_rounded(b));
  }
  check_dim("mm", a, 2, "mat1");
  check_dim("mm", b, 2, "mat2");
  check_dtypes("mm", a, b, "m1", "m2");
  EMBER_CHECK(a.size(1) == b.size(0), "mm: mat1 and mat2 shapes cannot be multiplied ({} and {})",
              mat_str(a), mat_str(b));
  Tensor out = empty_out({a.size(0), b.size(1)}, a);
  {
    NoGradGuard no_grad;
    gemm(a, b, out, nullptr, 1, 0);
  }
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    bool need_a = a.requires_grad(), need_b = b.requires_grad();
    record("MmBackward0", {&a, &b}, {sa, sb}, out, [sa, sb, need_a, need_b](const variable_list& g) -> variable_list {
      return {need_a ? mm(g[0], sb.unpack().t()) : Tensor(), need_b ? mm(sa.unpack().t(), g[0]) : Tensor()};
    });
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocasts(a) || autocasts(b)) {
    AutocastGuard off(false);
    return bmm(bf16_rounded(a), bf16_rounded(b));
  }
  check_dim("bmm", a, 3, "batch1");
  check_dim("bmm", b, 3, "batch2");
  check_dtypes("bmm", a, b, "batch1", "batch2");
  EMBER_CHECK(a.size(0) == b.size(0),
              "bmm: batch1 and batch2 must have the same batch size, but got {} and {}", shape_str(a),
              shape_str(b));
  EMBER_CHECK(a.size(2) == b.size(1), "bmm: batch1 and batch2 shapes cannot be multiplied ({} and {})",
              shape_str(a), shape_str(b));
  Tensor out = empty_out({a.size(0), a.size(1), b.size(2)}, a);
  {
    NoGradGuard no_grad;
    gemm(a, b, out, nullptr, 1, 0);
  }
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    record("BmmBackward0", {&a, &b}, {sa, sb}, out, [sa, sb](const variable_list& g) -> variable_list {
      return {bmm(g[0], sb.unpack().transpose(1, 2)), bmm(sa.unpack().transpose(1, 2), g[0])};
    });
  }
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1,
              "dot: expected both vectors to be 1-D, but got {}-D and {}-D tensors ({} and {})",
              a.dim(), b.dim(), shape_str(a), shape_str(b));
  check_dtypes("dot", a, b, "self", "tensor");
  EMBER_CHECK(a.size(0) == b.size(0),
              "dot: inconsistent tensor size, expected tensors {} and {} to have the same number of "
              "elements",
              shape_str(a), shape_str(b));
  Tensor out = empty_out({1, 1}, a);
  {
    NoGradGuard no_grad;
    gemm(a.unsqueeze(0), b.unsqueeze(1), out, nullptr, 1, 0);
    out = out.view({});
  }
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    record("DotBackward0", {&a, &b}, {sa, sb}, out, [sa, sb](const variable_list& g) -> variable_list {
      return {g[0] * sb.unpack(), g[0] * sa.unpack()};
    });
  }
  return out;
}

// torch.outer is a broadcast product (so it promotes dtypes, bool included).
Tensor outer(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1,
              "outer: expected both inputs to be 1-D vectors, but got {}-D and {}-D tensors ({} and {})",
              a.dim(), b.dim(), shape_str(a), shape_str(b));
  return mul(a.unsqueeze(1), b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocasts(a) || autocasts(b)) {
    AutocastGuard off(false);
    if (autocast_native_bf16() && mm_bf16_applies(a, b)) return mm_bf16(a, b);
    return matmul(bf16_rounded(a), bf16_rounded(b));
  }
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1,
              "matmul: both arguments need to be at least 1-D, but they are {}-D and {}-D", a.dim(),
              b.dim());
  check_dtypes("matmul", a, b, "m1", "m2");
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (any_requires_grad({&a, &b})) return matmul_differentiable(a, b);
  NoGradGuard no_grad;
  // Vectors become matrices ([K] -> [1, K] on the left, [K, 1] on the
  // right); the added dim is dropped from the result.
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  if (b2.size(-2) != k) {
    if (a.dim() <= 2 && b.dim() <= 2)
      EMBER_ERROR("matmul: shapes cannot be multiplied ({} and {})", mat_str(a2), mat_str(b2));
    EMBER_ERROR("matmul: shapes {} and {} cannot be multiplied: {} != {} (last dim of the first, "
                "second-to-last of the second)",
                shape_str(a), shape_str(b), k, b2.size(-2));
  }
  IntArrayRef sa = a2.sizes(), sb = b2.sizes();
  DimVector batch = broadcast_batch(IntArrayRef(sa.data(), sa.size() - 2),
                                    IntArrayRef(sb.data(), sb.size() - 2), a, b);
  int64_t nb = static_cast<int64_t>(batch.size());
  DimVector ea(batch), eb(batch);
  ea.push_back(m);
  ea.push_back(k);
  eb.push_back(k);
  eb.push_back(n);
  Tensor a3 = merge_batch(a2.expand(ea), nb), b3 = merge_batch(b2.expand(eb), nb);
  Tensor out = empty_out({a3.size(0), m, n}, a);
  gemm(a3, b3, out, nullptr, 1, 0);
  DimVector shape(batch);
  if (a.dim() > 1) shape.push_back(m);
  if (b.dim() > 1) shape.push_back(n);
  return out.view(shape);
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta_arg,
             const Scalar& alpha_arg) {
  check_dim("addmm", m1, 2, "mat1");
  check_dim("addmm", m2, 2, "mat2");
  check_dtypes("addmm", m1, m2, "m1", "m2");
  check_dtypes("addmm", input, m1, "self", "m1");
  // Integer GEMMs take beta and alpha cast to their dtype, as PyTorch's addmm
  // does (beta=0.5 on int64 is 0).
  const Scalar beta = scalar_in(beta_arg, m1.dtype()), alpha = scalar_in(alpha_arg, m1.dtype());
  EMBER_CHECK(m1.size(1) == m2.size(0), "addmm: mat1 and mat2 shapes cannot be multiplied ({} and {})",
              mat_str(m1), mat_str(m2));
  int64_t m = m1.size(0), n = m2.size(1);
  bool fits = input.dim() <= 2;
  for (int64_t i = 0; fits && i < input.dim(); ++i) {
    int64_t want = i == input.dim() - 1 ? n : m;
    fits = input.size(i) == want || input.size(i) == 1;
  }
  EMBER_CHECK(fits, "addmm: input of shape {} cannot be broadcast to the product's shape [{}, {}]",
              shape_str(input), m, n);
  if (any_requires_grad({&input, &m1, &m2})) {
    Tensor prod = mm(m1, m2);
    return add(mul(input, beta), mul(prod, alpha));
  }
  NoGradGuard no_grad;
  Tensor out = empty_out({m, n}, m1);
  // The common case (a bias row, beta == alpha == 1) rides on oneDNN's bias.
  bool unit = beta.to_double() == 1.0 && alpha.to_double() == 1.0;
  Tensor row = input.dim() == 2 && input.size(0) == 1 ? input.squeeze(0) : input;
  if (unit && row.dim() == 1 && row.size(0) == n) {
    gemm(m1, m2, out, &row, 1, 0);
    return out;
  }
  bool use_input = beta.to_double() != 0.0;  // beta == 0 ignores input, NaN included
  if (use_input) copy_(out, input);
  gemm(m1, m2, out, nullptr, alpha, use_input ? beta : Scalar(0));
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (autocasts(x) || autocasts(weight)) {
    AutocastGuard off(false);
    if (autocast_native_bf16() && linear_bf16_applies(x, weight, bias)) return linear_bf16(x, weight, bias);
    return linear(bf16_rounded(x), bf16_rounded(weight), bias);
  }
  EMBER_CHECK(x.dim() >= 1, "linear: expected input to be at least 1-D, but got a 0-D tensor");
  EMBER_CHECK(weight.dim() == 2,
              "linear: expected weight to be a 2-D [out_features, in_features] matrix, but got shape {}",
              shape_str(weight));
  check_dtypes("linear", x, weight, "input", "weight");
  int64_t in = x.size(-1), out_features = weight.size(0);
  EMBER_CHECK(weight.size(1) == in,
              "linear: input of shape {} and weight of shape {} cannot be multiplied: in_features is "
              "{} but the input's last dim is {}",
              shape_str(x), shape_str(weight), weight.size(1), in);
  if (bias) check_dtypes("linear", x, *bias, "input", "bias");
  const bool needs_grad = any_requires_grad({&x, &weight}) || (bias && bias->requires_grad() && GradMode::is_enabled());
  NoGradGuard no_grad;
  // Leading dims of x fold into the rows of one GEMM; weight.t() is read in place.
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  Tensor x2;
  if (auto rs = merged_stride(x, 0, x.dim() - 1)) {
    x2 = as_strided(x, {rows, in}, {*rs, x.stride(-1)});
  } else {
    x2 = x.contiguous().view({rows, in});
  }
  DimVector shape(x.sizes());
  shape.back() = out_features;
  Tensor out = empty_out({rows, out_features}, x);
  bool bias_row = bias && bias->dim() == 1 && bias->size(0) == out_features;
  gemm(x2, weight.t(), out, bias_row ? &*bias : nullptr, 1, 0);
  Tensor result = out.view(shape);
  if (bias && !bias_row) result = add(result, *bias);
  if (needs_grad) {
    EnableGradGuard grad_on;
    Tensor b = bias ? *bias : Tensor();
    SavedTensor sx = save(x), sw = save(weight);
    // Fresh handle: `result` is a view of `out`, and the history belongs to the op.
    result = result.detach();
    // Only the gradients some input needs: the input of a first layer (data)
    // usually needs none, and its matmul is the largest of the three.
    bool need_x = x.requires_grad(), need_w = weight.requires_grad(), need_b = b.defined() && b.requires_grad();
    record("LinearBackward0", {&x, &weight, &b}, {sx, sw}, result,
           [sx, sw, in, need_x, need_w, need_b, bias_shape = bias ? DimVector(bias->sizes()) : DimVector(),
            bias_dtype = bias ? bias->dtype() : x.dtype()](const variable_list& g) -> variable_list {
             Tensor gx = need_x ? matmul(g[0], sw.unpack()) : Tensor();
             Tensor gw = need_w ? mm(g[0].reshape({-1, g[0].size(-1)}).t(), sx.unpack().reshape({-1, in})) : Tensor();
             Tensor gb = need_b ? grad_for(g[0], bias_shape, bias_dtype) : Tensor();
             return {gx, gw, gb};
           });
  }
  return result;
}

// ---- Tensor methods ----
Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return ember::bmm(*this, o); }

}  // namespace ember

// Native bf16 autocast for linear and 2-D mm (Note [native bf16 autocast],
// ops/autocast_util.h): float32 tensors in and out, bf16 copies of the
// operands multiplied by oneDNN's bf16 x bf16 -> float32 matmul, forward and
// backward. The callers (linalg.cpp) have checked dtypes and shapes.
#include <optional>

#include "ember/core/grad_graph.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ops/autocast_util.h"
#include "ops/gemm.h"
#include "ops/grad_utils.h"

namespace ember {
namespace {

Tensor to_bf16(const Tensor& t) {
  NoGradGuard no_grad;
  return t.to(kBFloat16);
}

// a [M, K] @ b [K, N] (bf16, any row/column-major strides) -> float32 [M, N].
Tensor mm_f32_out(const Tensor& a, const Tensor& b, const Tensor* bias = nullptr) {
  NoGradGuard no_grad;
  Tensor out = empty({a.size(0), b.size(1)}, TensorOptions(kFloat32).device(a.device()));
  gemm(a, b, out, bias, 1, 0);
  return out;
}

// The emulated products, differentiable: backward under create_graph.
Tensor mm_rounded(const Tensor& a, const Tensor& b) {
  AutocastGuard off(false);
  return mm(bf16_rounded(a), bf16_rounded(b));
}

}  // namespace

bool linear_bf16_applies(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  return x.dtype() == kFloat32 && weight.dtype() == kFloat32 && (!bias || bias->dtype() == kFloat32) &&
         x.dim() >= 1 && weight.dim() == 2 && weight.size(1) == x.size(-1) && x.device() == weight.device();
}

bool mm_bf16_applies(const Tensor& a, const Tensor& b) {
  return a.dtype() == kFloat32 && b.dtype() == kFloat32 && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) &&
         a.device() == b.device();
}

Tensor mm_bf16(const Tensor& a, const Tensor& b) {
  Tensor out = mm_f32_out(to_bf16(a), to_bf16(b));
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    bool need_a = a.requires_grad(), need_b = b.requires_grad();
    record("MmBackward0", {&a, &b}, {sa, sb}, out, [sa, sb, need_a, need_b](const variable_list& g) -> variable_list {
      Tensor a = sa.unpack(), b = sb.unpack();
      if (GradMode::is_enabled())
        return {need_a ? mm_rounded(g[0], b.t()) : Tensor(), need_b ? mm_rounded(a.t(), g[0]) : Tensor()};
      Tensor gb = to_bf16(g[0]);
      return {need_a ? mm_f32_out(gb, to_bf16(b).t()) : Tensor(), need_b ? mm_f32_out(to_bf16(a).t(), gb) : Tensor()};
    });
  }
  return out;
}

Tensor linear_bf16(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  const int64_t in = x.size(-1), out_features = weight.size(0);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  const bool needs_grad =
      any_requires_grad({&x, &weight}) || (bias && bias->requires_grad() && GradMode::is_enabled());
  NoGradGuard no_grad;
  bool bias_row = bias && bias->dim() == 1 && bias->size(0) == out_features;
  Tensor out = mm_f32_out(to_bf16(x.reshape({rows, in})), to_bf16(weight).t(), bias_row ? &*bias : nullptr);
  DimVector shape(x.sizes());
  shape.back() = out_features;
  Tensor result = out.view(shape);
  if (bias && !bias_row) result = add(result, *bias);
  if (!needs_grad) return result;
  EnableGradGuard grad_on;
  Tensor b = bias ? *bias : Tensor();
  SavedTensor sx = save(x), sw = save(weight);
  result = result.detach();  // fresh handle: the history belongs to this op
  bool need_x = x.requires_grad(), need_w = weight.requires_grad(), need_b = b.defined() && b.requires_grad();
  record("LinearBackward0", {&x, &weight, &b}, {sx, sw}, result,
         [sx, sw, in, need_x, need_w, need_b, bias_shape = bias ? DimVector(bias->sizes()) : DimVector()](
             const variable_list& g) -> variable_list {
           Tensor x = sx.unpack(), w = sw.unpack();
           Tensor g2 = g[0].reshape({-1, g[0].size(-1)}), gx, gw;
           if (GradMode::is_enabled()) {  // create_graph: emulated, differentiable
             if (need_x) gx = mm_rounded(g2, w).view(x.sizes());
             if (need_w) gw = mm_rounded(g2.t(), x.reshape({-1, in}));
           } else {
             Tensor gb = to_bf16(g2);
             if (need_x) gx = mm_f32_out(gb, to_bf16(w)).view(x.sizes());
             if (need_w) gw = mm_f32_out(gb.t(), to_bf16(x.reshape({-1, in})));
           }
           Tensor gbias = need_b ? grad_for(g[0], bias_shape, kFloat32) : Tensor();
           return {gx, gw, gbias};
         });
  return result;
}

}  // namespace ember

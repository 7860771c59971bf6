// Composite activations, dropout, embedding and normalisation (see
// include/ember/ops/activation.h).
#include "ops/op_util.h"
#include "ember/ops/activation.h"

#include <cmath>

#include "ember/core/grad_graph.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "ops/random_internal.h"
#include "core/op_registry.h"
#include "ember/core/trace_hook.h"
#include "kernels/nn.h"

namespace ember {

namespace {
void check_float(const Tensor& x, const char* op) {
  EMBER_CHECK_TYPE(x.is_floating_point(), "{}: expected a floating-point tensor, got {}", op, to_string(x.dtype()));
}
}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  check_float(x, "leaky_relu");
  return where(gt(x, 0), x, x * negative_slope);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_float(x, "softplus");
  Tensor bx = x * beta;
  Tensor linear = gt(bx, threshold);
  // exp sees at most `threshold`, so the unused branch never overflows and
  // never turns a zero gradient into 0 * inf = nan.
  Tensor soft = log1p(exp(clamp_max(bx, threshold))) / beta;
  return where(linear, x, soft);
}

Tensor elu(const Tensor& x, double alpha) {
  check_float(x, "elu");
  // expm1 of min(x, 0) for the same reason as softplus.
  return where(gt(x, 0), x, expm1(clamp_max(x, 0)) * alpha);
}

namespace {
Tensor apply_dropout(const Tensor& x, double p, bool training, Generator* gen, IntArrayRef noise_shape,
                     const char* op) {
  EMBER_CHECK(p >= 0 && p <= 1, "{}: dropout probability has to be between 0 and 1, but got {}", op, p);
  // The identity (eval, p = 0) takes any dtype, as PyTorch's; sampling needs floats.
  if (!training || p == 0) return x;
  check_float(x, op);
  if (p == 1) return x * zeros(noise_shape, x.dtype());
  if (x.dtype() == kFloat32 && noise_shape.equals(x.sizes())) {
    // One pass instead of four (fill, draw, scale, multiply); the same numbers.
    // A strided x (MultiheadAttention's batch-first output) is copied first:
    // element i must draw block i in logical order, whatever the layout.
    auto [y, noise] = detail::dropout_f32(x.contiguous(), p, gen);
    if (any_requires_grad({&x})) {
      SavedTensor snoise = save(noise);
      record("MulBackward0", {&x}, {snoise}, y,
             [snoise](const variable_list& g) -> variable_list { return {g[0] * snoise.unpack()}; });
    }
    return y;
  }
  Tensor noise = bernoulli(zeros(noise_shape, x.dtype()), 1 - p, gen);
  noise.div_(1 - p);
  return x * noise;
}
}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  return apply_dropout(x, p, training, gen, x.sizes(), "dropout");
}

Tensor dropout2d(const Tensor& x, double p, bool training, Generator* gen) {
  EMBER_CHECK(x.dim() >= 2, "dropout2d: expected input (N, C, H, W) or (N, C, L), got shape {}",
              shape_str(x.sizes()));
  std::vector<int64_t> noise(static_cast<size_t>(x.dim()), 1);
  noise[0] = x.size(0);
  noise[1] = x.size(1);
  return apply_dropout(x, p, training, gen, noise, "dropout2d");
}

namespace {

void check_embedding_args(const Tensor& indices, const Tensor& weight) {
  EMBER_CHECK_TYPE(indices.dtype() == kInt64 || indices.dtype() == kInt32,
                   "embedding: expected indices of dtype int64 or int32, got {}; convert with .to(kInt64)",
                   to_string(indices.dtype()));
  EMBER_CHECK(weight.dim() == 2, "embedding: expected weight [num_embeddings, embedding_dim], got shape {}",
              shape_str(weight.sizes()));
}

// The gradient of the lookup divided, position by position, by how often its
// index occurs (PyTorch's scale_grad_by_freq), padding positions zero.
Tensor embedding_scaled_grad(const Tensor& weight, const Tensor& flat, std::optional<int64_t> padding_idx) {
  Tensor rows;
  {
    NoGradGuard no_grad;
    rows = index_select(weight, 0, flat);
  }
  const int64_t n = weight.size(0);
  Tensor counts = bincount(flat, std::nullopt, n);
  Tensor scale = reciprocal(index_select(counts, 0, flat).to(weight.dtype()));
  if (padding_idx) scale = where(ne(flat, *padding_idx), scale, zeros({}, TensorOptions(weight.dtype())));
  SavedTensor sflat = save(flat), sscale = save(scale);
  record("EmbeddingBackward0", {&weight}, {sflat, sscale}, rows,
         [sflat, sscale, n](const variable_list& g) -> variable_list {
           Tensor scaled = g[0] * sscale.unpack().unsqueeze(1);
           Tensor table = zeros({n, g[0].size(1)}, TensorOptions(g[0].dtype()));
           return {index_add(table, 0, sflat.unpack(), scaled)};
         });
  return rows;
}

}  // namespace

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  check_embedding_args(indices, weight);
  EMBER_CHECK(std::isfinite(max_norm) && max_norm >= 0, "embedding_renorm_: max_norm must be a finite number >= 0, got {}",
              max_norm);
  NoGradGuard no_grad;
  Tensor uniq = std::get<0>(unique(indices.reshape({-1}).to(kInt64)));
  const std::vector<int64_t> rows = uniq.to_vector<int64_t>();
  const int64_t n = weight.size(0);
  for (int64_t i : rows) {
    EMBER_CHECK_INDEX(i >= 0 && i < n, "embedding: index {} is out of range for {} embeddings", i, n);
    Tensor row = weight.select(0, i);
    const double norm = ember::norm(row, norm_type).item<double>();
    if (norm > max_norm) row.mul_(max_norm / (norm + 1e-7));
  }
  return weight;
}

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq, bool sparse) {
  check_embedding_args(indices, weight);
  EMBER_CHECK(!sparse,
              "embedding: sparse=true is not supported (Ember has no sparse tensors); sparse=false gives the same "
              "update as a dense gradient");
  if (padding_idx) {
    // PyTorch's F.embedding wraps a negative padding_idx, as nn::Embedding does.
    const int64_t n = weight.size(0);
    EMBER_CHECK(*padding_idx < n && *padding_idx >= -n,
                "embedding: padding_idx must be within num_embeddings [-{}, {}), got {}", n, n, *padding_idx);
    if (*padding_idx < 0) padding_idx = *padding_idx + n;
  }
  if (max_norm) {
    Tensor w = weight;  // the same storage: renormalised in place, as PyTorch does
    embedding_renorm_(w, indices, *max_norm, norm_type);
  }
  Tensor flat = indices.reshape({-1});
  if (flat.dtype() != kInt64) flat = flat.to(kInt64);
  std::vector<int64_t> out_shape = indices.sizes().vec();
  out_shape.push_back(weight.size(1));
  const bool grad = GradMode::is_enabled() && weight.requires_grad();
  if (scale_grad_by_freq && grad) return embedding_scaled_grad(weight, flat, padding_idx).view(out_shape);
  Tensor rows = index_select(weight, 0, flat);
  if (padding_idx && grad) {
    // Same values, but padding positions read a detached weight: no gradient.
    Tensor keep = ne(flat, *padding_idx).unsqueeze(1);
    rows = where(keep, rows, index_select(weight.detach(), 0, flat));
  }
  return rows.view(out_shape);
}


namespace {

// The differentiable composite: other dtypes, tracing (the graph has no
// layer_norm node), and double backward.
Tensor layer_norm_composite(const Tensor& input, const std::vector<int64_t>& dims, const Tensor& weight,
                            const Tensor& bias, double eps) {
  Tensor mean = ember::mean(input, dims, true);
  Tensor var = ember::var(input, dims, 0, true);
  Tensor out = (input - mean) * rsqrt(var + eps);
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

// A float32 tensor's data, or null for an undefined (absent) one.
float* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// Forward and backward through the layer_norm kernels (kernels/nn.h).
Tensor layer_norm_fused(const Tensor& input, IntArrayRef normalized_shape, const std::vector<int64_t>& dims,
                        const Tensor& weight, const Tensor& bias, double eps) {
  const Tensor x = input.contiguous();
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  int64_t d = 1;
  for (int64_t s : normalized_shape) d *= s;
  const LayerNormParams p{x.numel() / d, d, static_cast<float>(eps)};
  // mean: less the row's first element (LayerNormKernel).
  Tensor y = empty(x.sizes(), kFloat32), mean = empty({p.rows}, kFloat32), rstd = empty({p.rows}, kFloat32);
  get_kernel<LayerNormKernel>(Op::layer_norm, x.device())(p, x.data_ptr<float>(), data_or_null(w), data_or_null(b),
                                                          y.data_ptr<float>(), mean.data_ptr<float>(),
                                                          rstd.data_ptr<float>());
  if (!any_requires_grad({&input, &weight, &bias})) return y;
  const bool need_x = input.requires_grad(), need_w = weight.defined() && weight.requires_grad(),
             need_b = bias.defined() && bias.requires_grad();
  std::vector<int64_t> shape = normalized_shape.vec();
  SavedTensor sx = save(x), sw = save(w);
  record("NativeLayerNormBackward0", {&input, &weight, &bias}, {sx, sw}, y,
         [sx, sw, mean, rstd, dims, shape, p, eps, need_x, need_w, need_b](const variable_list& g) -> variable_list {
           Tensor xs = sx.unpack(), ws = sw.unpack();
           if (GradMode::is_enabled()) {
             // create_graph: differentiate the composite so second derivatives
             // (through the row statistics too) are recorded.
             std::vector<int64_t> batch_dims;
             for (int64_t i = 0; i < xs.dim() - static_cast<int64_t>(shape.size()); ++i) batch_dims.push_back(i);
             Tensor m = ember::mean(xs, dims, true), inv = rsqrt(ember::var(xs, dims, 0, true) + eps);
             Tensor xhat = (xs - m) * inv;
             auto over_batch = [&](const Tensor& t) { return batch_dims.empty() ? t : t.sum(batch_dims); };
             Tensor gx, gw, gb;
             if (need_b) gb = over_batch(g[0]);
             if (need_w) gw = over_batch(g[0] * xhat);
             if (need_x) {
               Tensor dxhat = ws.defined() ? g[0] * ws : g[0];
               gx = inv * (dxhat - ember::mean(dxhat, dims, true) - xhat * ember::mean(dxhat * xhat, dims, true));
             }
             return {gx, gw, gb};
           }
           const Tensor dy = g[0].contiguous();
           Tensor gx = need_x ? empty(xs.sizes(), kFloat32) : Tensor();
           Tensor gw = need_w ? empty(shape, kFloat32) : Tensor(), gb = need_b ? empty(shape, kFloat32) : Tensor();
           get_kernel<LayerNormBackwardKernel>(Op::layer_norm_backward, xs.device())(
               p, dy.data_ptr<float>(), xs.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
               data_or_null(ws), data_or_null(gx), data_or_null(gw), data_or_null(gb));
           return {gx, gw, gb};
         });
  return y;
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  check_float(input, "layer_norm");
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == normalized_shape[i];
  EMBER_CHECK(ok, "layer_norm: expected input with shape [*, {}], but got input of size {}",
              fmt::join(normalized_shape.vec(), ", "), shape_str(input.sizes()));
  for (const Tensor* t : {&weight, &bias})
    EMBER_CHECK(!t->defined() || t->sizes().vec() == normalized_shape.vec(),
                "layer_norm: expected weight and bias of shape {}, got {}", shape_str(normalized_shape),
                shape_str(t->sizes()));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < k; ++i) dims.push_back(input.dim() - k + i);
  auto f32 = [](const Tensor& t) { return !t.defined() || t.dtype() == kFloat32; };
  auto compute = [&](const Tensor& x) {
    if (x.dtype() == kFloat32 && f32(weight) && f32(bias) && x.numel() > 0)
      return layer_norm_fused(x, normalized_shape, dims, weight, bias, eps);
    return layer_norm_composite(x, dims, weight, bias, eps);
  };
  TraceHook* th = trace_hook();
  if (!th) [[likely]]
    return compute(input);
  // One layer_norm node, which the interpreter replays with this same
  // function: a traced graph gives eager's numbers bitwise.
  const Tensor x = input.contiguous();
  Tensor out;
  {
    TraceHookPause pause;
    out = compute(x);
  }
  th->record(Op::layer_norm, {&x, &weight, &bias}, {&out}, {{"normalized_dims", k}, {"eps", eps}});
  return out;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  check_float(input, "group_norm");
  EMBER_CHECK(input.dim() >= 2, "group_norm: expected input (N, C, *) with at least 2 dims, got shape {}",
              shape_str(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  EMBER_CHECK(num_groups > 0 && c % num_groups == 0,
              "group_norm: expected the number of channels {} to be divisible by num_groups {}", c, num_groups);
  Tensor grouped = input.reshape({n, num_groups, -1});
  Tensor mean = ember::mean(grouped, {2}, true);
  Tensor var = ember::var(grouped, {2}, 0, true);
  Tensor out = ((grouped - mean) * rsqrt(var + eps)).view(input.sizes());
  std::vector<int64_t> cshape = channel_shape(input);
  if (weight.defined()) out = out * weight.view(cshape);
  if (bias.defined()) out = out + bias.view(cshape);
  return out;
}

}  // namespace ember

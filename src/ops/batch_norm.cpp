// batch_norm: fused kernels for float32/float64 (one statistics pass, one
// normalise pass, a two-pass backward), the composite formula for other
// dtypes and for double backward (create_graph).
#include <cmath>

#include "ops/op_util.h"
#include "ember/core/grad_graph.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/nn.h"
#include "ember/core/trace_hook.h"

namespace ember {

namespace {

std::vector<int64_t> reduce_dims(const Tensor& input) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) dims.push_back(d);
  return dims;
}

void update_running(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean, const Tensor& var,
                    int64_t n, double momentum) {
  if (!running_mean.defined() || !running_var.defined()) return;
  NoGradGuard no_grad;
  const int64_t c = running_mean.numel();
  Tensor rm = running_mean, rv = running_var;
  rm.mul_(1 - momentum).add_(mean.detach().reshape({c}).to(rm.dtype()), momentum);
  Tensor unbiased = var.detach().reshape({c}) * (static_cast<double>(n) / static_cast<double>(n - 1));
  rv.mul_(1 - momentum).add_(unbiased.to(rv.dtype()), momentum);
}

// The differentiable composite: other dtypes, and double backward.
Tensor composite(const Tensor& input, const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias,
                 double eps) {
  std::vector<int64_t> cshape = channel_shape(input);
  Tensor out = (input - mean) * rsqrt(var + eps);
  if (weight.defined()) out = out * weight.view(cshape);
  if (bias.defined()) out = out + bias.view(cshape);
  return out;
}

bool fused_dtype(const Tensor& t) { return t.dtype() == kFloat32 || t.dtype() == kFloat64; }

Tensor doubles(const std::vector<double>& v) { return tensor<double>(v, {static_cast<int64_t>(v.size())}); }

// Empty for an undefined tensor (no affine weight or bias).
std::vector<double> to_doubles(const Tensor& t) {
  if (!t.defined()) return {};
  Tensor d = t.detach().to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// out = (x - mean) * invstd * w + b per channel (w, b may be empty), as one
// scale/shift pass of the apply kernel; x is contiguous.
Tensor apply_normalization(const Tensor& x, const BatchNormParams& p, const std::vector<double>& mean,
                           const std::vector<double>& invstd, const std::vector<double>& w,
                           const std::vector<double>& b) {
  const size_t c = mean.size();
  std::vector<double> scale(c), shift(c);
  for (size_t i = 0; i < c; ++i) {
    scale[i] = invstd[i] * (w.empty() ? 1.0 : w[i]);
    shift[i] = (b.empty() ? 0.0 : b[i]) - mean[i] * scale[i];
  }
  Tensor out = empty(x.sizes(), TensorOptions(x.dtype()).device(x.device()));
  NoGradGuard no_grad;
  get_kernel<BatchNormApplyKernel>(Op::batch_norm_apply, x.device())(p, x.data_ptr(), scale.data(), shift.data(),
                                                                    out.data_ptr());
  return out;
}

// Training-mode forward and backward through the fused kernels.
Tensor fused_training(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                      const Tensor& weight, const Tensor& bias, double momentum, double eps) {
  const int64_t c = input.size(1);
  Tensor x = input.contiguous();
  BatchNormParams p{x.size(0), c, x.numel() / std::max<int64_t>(1, x.size(0) * c), x.dtype()};
  std::vector<double> mean(static_cast<size_t>(c)), var(static_cast<size_t>(c)), invstd(static_cast<size_t>(c));
  {
    NoGradGuard no_grad;
    if (TraceHook* th = trace_hook()) [[unlikely]]
      th->unsupported("batch_norm_stats", "batch_norm in training mode cannot be traced; trace the module in eval mode");
    get_kernel<BatchNormStatsKernel>(Op::batch_norm_stats, x.device())(p, x.data_ptr(), mean.data(), var.data());
  }
  for (int64_t i = 0; i < c; ++i) invstd[static_cast<size_t>(i)] = 1.0 / std::sqrt(var[static_cast<size_t>(i)] + eps);
  update_running(running_mean, running_var, doubles(mean), doubles(var), p.n * p.inner, momentum);

  std::vector<double> w = to_doubles(weight), b = to_doubles(bias);
  Tensor out = apply_normalization(x, p, mean, invstd, w, b);
  if (!any_requires_grad({&input, &weight, &bias})) return out;

  SavedTensor sx = save(x), sw = save(weight);
  const bool need_x = input.requires_grad(), need_w = weight.defined() && weight.requires_grad(),
             need_b = bias.defined() && bias.requires_grad();
  record("NativeBatchNormBackward0", {&input, &weight, &bias}, {sx, sw}, out,
         [sx, sw, p, mean, invstd, w, eps, need_x, need_w, need_b](const variable_list& g) -> variable_list {
           Tensor xs = sx.unpack(), ws = sw.unpack();
           if (GradMode::is_enabled()) {
             // create_graph: differentiate the composite so second derivatives
             // (through the batch statistics too) are recorded.
             std::vector<int64_t> dims = reduce_dims(xs);
             Tensor m = ember::mean(xs, dims, true), v = ember::var(xs, dims, 0, true);
             Tensor gx, gw, gb;
             Tensor xhat = (xs - m) * rsqrt(v + eps);
             if (need_b) gb = g[0].sum(dims);
             if (need_w) gw = (g[0] * xhat).sum(dims);
             if (need_x) {
               Tensor dxhat = ws.defined() ? g[0] * ws.view(channel_shape(xs)) : g[0];
               Tensor inv = rsqrt(v + eps);
               gx = inv * (dxhat - ember::mean(dxhat, dims, true) - xhat * ember::mean(dxhat * xhat, dims, true));
             }
             return {gx, gw, gb};
           }
           Tensor dy = g[0].contiguous();
           const size_t c = static_cast<size_t>(p.c);
           std::vector<double> sum_dy(c), sum_dy_xhat(c);
           Tensor gx = need_x ? empty(xs.sizes(), TensorOptions(xs.dtype()).device(xs.device())) : Tensor();
           get_kernel<BatchNormBackwardKernel>(Op::batch_norm_backward, xs.device())(
               p, xs.data_ptr(), dy.data_ptr(), mean.data(), invstd.data(), w.empty() ? nullptr : w.data(),
               need_x ? gx.data_ptr() : nullptr, sum_dy.data(), sum_dy_xhat.data());
           Tensor gw, gb;
           if (need_w) gw = doubles(sum_dy_xhat).to(ws.dtype());
           if (need_b) gb = doubles(sum_dy).to(ws.defined() ? ws.dtype() : xs.dtype());
           return {gx, gw, gb};
         });
  return out;
}

// Eval mode without gradients (inference): the running statistics fold into
// one per-channel scale and shift, applied in one pass. The composite took
// four broadcast passes (sub, mul, mul, add) over the activations.
Tensor fused_eval(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const int64_t c = input.size(1);
  Tensor x = input.contiguous();
  BatchNormParams p{x.size(0), c, x.numel() / std::max<int64_t>(1, x.size(0) * c), x.dtype()};
  std::vector<double> rm = to_doubles(running_mean), invstd = to_doubles(running_var);
  for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
  Tensor out = apply_normalization(x, p, rm, invstd, to_doubles(weight), to_doubles(bias));
  // The per-channel scale and shift are read from the statistics on the host:
  // the node keeps the tensors, so a replay reads them again.
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::batch_norm_apply, {&x, &running_mean, &running_var, &weight, &bias}, {&out}, {{"eps", eps}});
  return out;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  EMBER_CHECK_TYPE(input.is_floating_point(), "batch_norm: expected a floating-point tensor, got {}",
                   to_string(input.dtype()));
  EMBER_CHECK(input.dim() >= 2, "batch_norm: expected input (N, C, *) with at least 2 dims, got shape {}",
              shape_str(input.sizes()));
  int64_t c = input.size(1);
  auto check_vec = [&](const Tensor& t, const char* what) {
    EMBER_CHECK(!t.defined() || (t.dim() == 1 && t.size(0) == c),
                "batch_norm: expected {} of shape [{}] (the input's channel dim), got {}", what, c,
                shape_str(t.sizes()));
  };
  check_vec(running_mean, "running_mean");
  check_vec(running_var, "running_var");
  check_vec(weight, "weight");
  check_vec(bias, "bias");

  const bool same_dtype = (!weight.defined() || weight.dtype() == input.dtype()) &&
                          (!bias.defined() || bias.dtype() == input.dtype());
  const bool fusable = fused_dtype(input) && same_dtype && input.device().is_cpu();
  if (training) {
    int64_t n = input.numel() / std::max<int64_t>(c, 1);
    EMBER_CHECK(n > 1, "batch_norm: expected more than 1 value per channel when training, got input size {}",
                shape_str(input.sizes()));
    if (fusable)
      return fused_training(input, running_mean, running_var, weight, bias, momentum, eps);
    std::vector<int64_t> dims = reduce_dims(input);
    Tensor mean = ember::mean(input, dims, true);
    Tensor var = ember::var(input, dims, 0, true);
    update_running(running_mean, running_var, mean, var, n, momentum);
    return composite(input, mean, var, weight, bias, eps);
  }
  EMBER_CHECK(running_mean.defined() && running_var.defined(),
              "batch_norm: running_mean and running_var are required in eval mode (training=false)");
  if (fusable && !any_requires_grad({&input, &weight, &bias}))
    return fused_eval(input, running_mean, running_var, weight, bias, eps);
  std::vector<int64_t> cshape = channel_shape(input);
  return composite(input, running_mean.view(cshape), running_var.view(cshape), weight, bias, eps);
}

}  // namespace ember

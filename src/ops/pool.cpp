// Pooling (torch.nn.functional.max_pool1d/2d, avg_pool2d,
// adaptive_avg_pool2d): PyTorch's shape rules (ceil_mode, padding limits),
// and derivatives as ops that are themselves differentiable.
#include <cmath>
#include <string>

#include "ops/op_util.h"
#include "ops/pool_nd.h"
#include "ember/core/grad_graph.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/nn_functional.h"
#include "kernels/nn.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {

TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).device(t.device()); }

// A (C, H, W) input is treated as a batch of one.
Tensor batched(const Tensor& t) { return t.dim() == 3 ? t.unsqueeze(0) : t; }
Tensor unbatched(const Tensor& out, const Tensor& input) { return input.dim() == 3 ? out.squeeze(0) : out; }

void check_input(const char* op, const Tensor& x) {
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4, "{}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got {}", op,
              shape_str(x.sizes()));
  for (int64_t d = x.dim() - 3; d < x.dim(); ++d)
    EMBER_CHECK(x.size(d) > 0, "{}: expected input to have non-zero size for non-batch dimensions, got {}", op,
                shape_str(x.sizes()));
  EMBER_CHECK_TYPE(is_floating_point(x.dtype()), "{}: expected a floating-point input, got {}", op,
                   to_string(x.dtype()));
}

DimVector expand2(const char* op, const char* name, IntArrayRef v, IntArrayRef fallback) {
  if (v.empty()) v = fallback;
  EMBER_CHECK(v.size() == 1 || v.size() == 2, "{}: {} must either be a single int, or a tuple of two ints, got {}",
              op, name, shape_str(v));
  return {v[0], v[v.size() - 1]};
}

// PyTorch's pooling_output_shape: floor or ceil, and with ceil_mode the last
// window must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Validates and fills the geometry for a batched [N, C, H, W] input x.
PoolParams pool_params(const char* op, const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  DimVector k = expand2(op, "kernel_size", kernel_size, kernel_size);
  DimVector s = expand2(op, "stride", stride, kernel_size);
  DimVector pad = expand2(op, "padding", padding, padding);
  DimVector d = expand2(op, "dilation", dilation, dilation);
  EMBER_CHECK(k[0] > 0 && k[1] > 0, "{}: kernel size should be greater than zero, but got kH: {} kW: {}", op, k[0],
              k[1]);
  EMBER_CHECK(s[0] > 0 && s[1] > 0, "{}: stride should be greater than zero, but got dH: {} dW: {}", op, s[0], s[1]);
  EMBER_CHECK(d[0] > 0 && d[1] > 0, "{}: dilation should be greater than zero, but got dilationH: {} dilationW: {}",
              op, d[0], d[1]);
  for (int i = 0; i < 2; ++i)
    EMBER_CHECK(pad[i] >= 0 && pad[i] <= k[i] / 2,
                "{}: pad should be at most half of kernel size, but got pad={} and kernel_size={}", op, pad[i], k[i]);
  PoolParams p;
  p.dtype = x.dtype();
  p.n = x.size(0);
  p.c = x.size(1);
  p.ih = x.size(2);
  p.iw = x.size(3);
  p.kh = k[0];
  p.kw = k[1];
  p.sh = s[0];
  p.sw = s[1];
  p.dh = d[0];
  p.dw = d[1];
  p.pt = pad[0];
  p.pl = pad[1];
  p.oh = pooled_size(p.ih, p.kh, p.pt, p.sh, p.dh, ceil_mode);
  p.ow = pooled_size(p.iw, p.kw, p.pl, p.sw, p.dw, ceil_mode);
  EMBER_CHECK(p.oh >= 1 && p.ow >= 1,
              "{}: given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too small", op,
              p.c, p.ih, p.iw, p.c, std::max<int64_t>(p.oh, 0), std::max<int64_t>(p.ow, 0));
  return p;
}

// ---- max pooling: backward scatters through the argmax indices ----

Tensor max_pool_backward_op(const Tensor& g, const Tensor& indices, const PoolParams& p) {
  Tensor gc, ic = indices.contiguous();
  {
    NoGradGuard no_grad;
    gc = g.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.ih, p.iw}, like(g));
  get_kernel<MaxPool2dBackwardKernel>(Op::max_pool2d_backward, g.device())(
      p, gc.data_ptr(), ic.data_ptr<int64_t>(), out.data_ptr());
  if (any_requires_grad({&g})) {
    // The scatter's derivative picks the gradient back out at the indices.
    SavedTensor si = save(indices);
    record("MaxPool2DWithIndicesBackwardBackward0", {&g}, {si}, out,
           [si, p](const variable_list& G) -> variable_list {
             Tensor idx = si.unpack();
             return {gather(G[0].reshape({p.n, p.c, p.ih * p.iw}), 2, idx.view({p.n, p.c, p.oh * p.ow}))
                         .view({p.n, p.c, p.oh, p.ow})};
           });
  }
  return out;
}

std::pair<Tensor, Tensor> max_pool_with_indices(const Tensor& x, const PoolParams& p) {
  Tensor xc;
  {
    NoGradGuard no_grad;
    xc = x.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.oh, p.ow}, like(x));
  Tensor indices = empty({p.n, p.c, p.oh, p.ow}, TensorOptions(kInt64).device(x.device()));
  get_kernel<MaxPool2dKernel>(Op::max_pool2d_with_indices, x.device())(p, xc.data_ptr(), out.data_ptr(),
                                                                        indices.data_ptr<int64_t>());
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::max_pool2d_with_indices, {&xc}, {&out, &indices},
               {{"kernel_size", std::vector<int64_t>{p.kh, p.kw}}, {"stride", std::vector<int64_t>{p.sh, p.sw}},
                {"dilation", std::vector<int64_t>{p.dh, p.dw}}, {"padding", std::vector<int64_t>{p.pt, p.pl}},
                {"count_include_pad", p.count_include_pad}});
  if (any_requires_grad({&x})) {
    SavedTensor si = save(indices);
    record("MaxPool2DWithIndicesBackward0", {&x}, {si}, out, [si, p](const variable_list& g) -> variable_list {
      return {max_pool_backward_op(g[0], si.unpack(), p)};
    });
  }
  return {out, indices};
}

// ---- average pooling: forward and backward are each other's transposes ----

Tensor avg_pool_backward_op(const Tensor& g, const PoolParams& p);

Tensor avg_pool_op(const Tensor& x, const PoolParams& p) {
  Tensor xc;
  {
    NoGradGuard no_grad;
    xc = x.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.oh, p.ow}, like(x));
  get_kernel<AvgPool2dKernel>(Op::avg_pool2d, x.device())(p, xc.data_ptr(), out.data_ptr());
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::avg_pool2d, {&xc}, {&out},
               {{"kernel_size", std::vector<int64_t>{p.kh, p.kw}}, {"stride", std::vector<int64_t>{p.sh, p.sw}},
                {"dilation", std::vector<int64_t>{p.dh, p.dw}}, {"padding", std::vector<int64_t>{p.pt, p.pl}},
                {"count_include_pad", p.count_include_pad}});
  if (any_requires_grad({&x}))
    record("AvgPool2DBackward0", {&x}, out,
           [p](const variable_list& g) -> variable_list { return {avg_pool_backward_op(g[0], p)}; });
  return out;
}

Tensor avg_pool_backward_op(const Tensor& g, const PoolParams& p) {
  Tensor gc;
  {
    NoGradGuard no_grad;
    gc = g.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.ih, p.iw}, like(g));
  get_kernel<AvgPool2dBackwardKernel>(Op::avg_pool2d_backward, g.device())(p, gc.data_ptr(), out.data_ptr());
  if (any_requires_grad({&g}))
    record("AvgPool2DBackwardBackward0", {&g}, out,
           [p](const variable_list& G) -> variable_list { return {avg_pool_op(G[0], p)}; });
  return out;
}

Tensor adaptive_backward_op(const Tensor& g, const PoolParams& p);

Tensor adaptive_op(const Tensor& x, const PoolParams& p) {
  Tensor xc;
  {
    NoGradGuard no_grad;
    xc = x.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.oh, p.ow}, like(x));
  if (out.numel() > 0)
    get_kernel<AdaptiveAvgPool2dKernel>(Op::adaptive_avg_pool2d, x.device())(p, xc.data_ptr(), out.data_ptr());
  if (TraceHook* th = trace_hook()) [[unlikely]] th->record(Op::adaptive_avg_pool2d, {&xc}, {&out}, {});
  if (any_requires_grad({&x}))
    record("AdaptiveAvgPool2DBackward0", {&x}, out,
           [p](const variable_list& g) -> variable_list { return {adaptive_backward_op(g[0], p)}; });
  return out;
}

Tensor adaptive_backward_op(const Tensor& g, const PoolParams& p) {
  Tensor gc;
  {
    NoGradGuard no_grad;
    gc = g.contiguous();
  }
  Tensor out = empty({p.n, p.c, p.ih, p.iw}, like(g));
  if (g.numel() > 0)
    get_kernel<AdaptiveAvgPool2dBackwardKernel>(Op::adaptive_avg_pool2d_backward, g.device())(p, gc.data_ptr(),
                                                                                             out.data_ptr());
  else
    out.zero_();
  if (any_requires_grad({&g}))
    record("AdaptiveAvgPool2DBackwardBackward0", {&g}, out,
           [p](const variable_list& G) -> variable_list { return {adaptive_op(G[0], p)}; });
  return out;
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  check_input("max_pool2d", input);
  Tensor x = batched(input);
  PoolParams p = pool_params("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode);
  auto [out, indices] = max_pool_with_indices(x, p);
  return {unbatched(out, input), unbatched(indices, input)};
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  check_input("max_pool2d", input);
  Tensor x = batched(input);
  PoolParams p = pool_params("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode);
  if (any_requires_grad({&x})) return unbatched(max_pool_with_indices(x, p).first, input);
  // No backward to serve: oneDNN's pooling needs no indices.
  Tensor xc = x.contiguous();
  Tensor out = empty({p.n, p.c, p.oh, p.ow}, like(x));
  get_kernel<MaxPool2dKernel>(Op::max_pool2d, x.device())(p, xc.data_ptr(), out.data_ptr(), nullptr);
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::max_pool2d, {&xc}, {&out},
               {{"kernel_size", std::vector<int64_t>{p.kh, p.kw}}, {"stride", std::vector<int64_t>{p.sh, p.sw}},
                {"dilation", std::vector<int64_t>{p.dh, p.dw}}, {"padding", std::vector<int64_t>{p.pt, p.pl}},
                {"count_include_pad", p.count_include_pad}});
  return unbatched(out, input);
}

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool1d";
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "{}: expected a 2-D (C, L) or 3-D (N, C, L) input, got {}", op,
              shape_str(input.sizes()));
  EMBER_CHECK(input.size(-1) > 0 && input.size(-2) > 0,
              "{}: expected input to have non-zero size for non-batch dimensions, got {}", op,
              shape_str(input.sizes()));
  auto one = [&](const char* name, IntArrayRef v, IntArrayRef fallback) -> int64_t {
    if (v.empty()) v = fallback;
    EMBER_CHECK(v.size() == 1, "{}: {} must be a single int, got {}", op, name, shape_str(v));
    return v[0];
  };
  int64_t k = one("kernel_size", kernel_size, kernel_size), s = one("stride", stride, kernel_size),
          pad = one("padding", padding, padding), d = one("dilation", dilation, dilation);
  EMBER_CHECK(k > 0, "{}: kernel_size must be greater than zero, but got {}", op, k);
  EMBER_CHECK(s > 0, "{}: stride must be greater than zero, but got {}", op, s);
  EMBER_CHECK(d > 0, "{}: dilation must be greater than zero, but got {}", op, d);
  EMBER_CHECK(pad >= 0 && pad <= k / 2, "{}: padding should be at most half of kernel size, but got padding={} and kernel_size={}",
              op, pad, k);
  int64_t out_len = pooled_size(input.size(-1), k, pad, s, d, ceil_mode);
  EMBER_CHECK(out_len >= 1, "{}: invalid computed output size: {} (input length {}, kernel_size={}, padding={})", op,
              out_len, input.size(-1), k, pad);
  // A length-L signal is a 1 x L image.
  return max_pool2d(input.unsqueeze(-2), {1, k}, {1, s}, {0, pad}, {1, d}, ceil_mode).squeeze(-2);
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  // int64: PyTorch's truncating integer average, which the kernels do not do.
  if (input.dtype() == kInt64)
    return avg_pool_nd("avg_pool2d", input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       std::nullopt);
  check_input("avg_pool2d", input);
  Tensor x = batched(input);
  PoolParams p = pool_params("avg_pool2d", x, kernel_size, stride, padding, {1}, ceil_mode);
  p.count_include_pad = count_include_pad;
  return unbatched(avg_pool_op(x, p), input);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  check_input(op, input);
  EMBER_CHECK(output_size.size() == 1 || output_size.size() == 2,
              "{}: output_size must be a single int or two ints, got {}", op, shape_str(output_size));
  int64_t oh = output_size[0], ow = output_size[output_size.size() - 1];
  EMBER_CHECK(oh >= 0 && ow >= 0, "{}: elements of output_size must be greater than or equal to 0, but got {}", op,
              shape_str(output_size));
  Tensor x = batched(input);
  PoolParams p;
  p.dtype = x.dtype();
  p.n = x.size(0);
  p.c = x.size(1);
  p.ih = x.size(2);
  p.iw = x.size(3);
  p.oh = oh;
  p.ow = ow;
  // Evenly dividing windows are plain average pooling (oneDNN's kernel).
  if (oh > 0 && ow > 0 && p.ih % oh == 0 && p.iw % ow == 0) {
    p.kh = p.sh = p.ih / oh;
    p.kw = p.sw = p.iw / ow;
    return unbatched(avg_pool_op(x, p), input);
  }
  return unbatched(adaptive_op(x, p), input);
}

}  // namespace ember

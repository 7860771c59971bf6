// Convolutions (torch.nn.functional.conv1d, conv2d, conv_transpose2d):
// argument checks with PyTorch's rules, geometry, and derivatives written as
// three mutually differentiable ops (Note [conv derivatives]).
#include <string>
#include <string_view>

#include "ops/op_util.h"
#include "ember/core/grad_graph.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/reduction.h"
#include "kernels/nn.h"
#include "ops/autocast_util.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {


// Note [conv derivatives]: with y = conv(x, w) (Note [conv geometry]), the
// three linear maps
//   conv(x, w)               -> y-shaped
//   input_grad(g, w)  = dL/dx of <g, conv(x, w)>     -> x-shaped
//   weight_grad(x, g) = dL/dw of <g, conv(x, w)>     -> w-shaped
// differentiate into each other:
//   conv:        dx = input_grad(g, w),    dw = weight_grad(x, g)
//   input_grad:  dg = conv(G, w),          dw = weight_grad(G, g)
//   weight_grad: dx = input_grad(g, G),    dg = conv(x, G)
// (G is the incoming gradient), so every order of derivative is exact.
// conv_transpose2d is input_grad with the roles of the shapes swapped.
Tensor conv_op(const Tensor& x, const Tensor& w, const Tensor& b, const ConvParams& p);
Tensor input_grad_op(const Tensor& g, const Tensor& w, const ConvParams& p);
Tensor weight_grad_op(const Tensor& x, const Tensor& g, const ConvParams& p);

bool needs_grad(const Tensor& t) { return t.defined() && GradMode::is_enabled() && t.requires_grad(); }

TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).device(t.device()); }

// ---- the kernels, on contiguous operands (no graph) ----
Tensor conv_raw(const Tensor& x, const Tensor& w, const Tensor& b, ConvParams p) {
  NoGradGuard no_grad;
  p.dtype = x.dtype();
  Tensor xc = x.contiguous(), wc = w.contiguous(), bc = b.defined() ? b.contiguous() : Tensor();
  Tensor out = empty({p.n, p.c_out, p.oh, p.ow}, like(x));
  get_kernel<Conv2dKernel>(Op::conv2d, x.device())(p, xc.data_ptr(), wc.data_ptr(),
                                                   bc.defined() ? bc.data_ptr() : nullptr, out.data_ptr());
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::conv2d, {&xc, &wc, &bc}, {&out},
               {{"stride", std::vector<int64_t>{p.sh, p.sw}}, {"dilation", std::vector<int64_t>{p.dh, p.dw}},
                {"padding", std::vector<int64_t>{p.pt, p.pb, p.pl, p.pr}}, {"groups", p.groups}});
  return out;
}

Tensor input_grad_raw(const Tensor& g, const Tensor& w, ConvParams p) {
  NoGradGuard no_grad;
  p.dtype = g.dtype();
  Tensor gc = g.contiguous(), wc = w.contiguous();
  Tensor out = empty({p.n, p.c_in, p.ih, p.iw}, like(g));
  get_kernel<Conv2dBackwardInputKernel>(Op::conv2d_backward_input, g.device())(p, gc.data_ptr(), wc.data_ptr(),
                                                                               out.data_ptr());
  // conv_transpose2d's forward runs this kernel.
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::conv2d_backward_input, {&gc, &wc}, {&out},
               {{"stride", std::vector<int64_t>{p.sh, p.sw}}, {"dilation", std::vector<int64_t>{p.dh, p.dw}},
                {"padding", std::vector<int64_t>{p.pt, p.pb, p.pl, p.pr}}, {"groups", p.groups}});
  return out;
}

// (weight grad, bias grad or undefined)
std::pair<Tensor, Tensor> weight_grad_raw(const Tensor& x, const Tensor& g, ConvParams p, bool bias) {
  NoGradGuard no_grad;
  p.dtype = x.dtype();
  Tensor xc = x.contiguous(), gc = g.contiguous();
  Tensor gw = empty({p.c_out, p.c_in / p.groups, p.kh, p.kw}, like(x));
  Tensor gb = bias ? empty({p.c_out}, like(x)) : Tensor();
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->unsupported("conv2d_backward_weight", "a convolution's weight gradient cannot be traced");
  get_kernel<Conv2dBackwardWeightKernel>(Op::conv2d_backward_weight, x.device())(
      p, xc.data_ptr(), gc.data_ptr(), gw.data_ptr(), bias ? gb.data_ptr() : nullptr);
  return {gw, gb};
}

// ---- the differentiable ops ----
Tensor conv_op(const Tensor& x, const Tensor& w, const Tensor& b, const ConvParams& p) {
  Tensor out = conv_raw(x, w, b, p);
  if (any_requires_grad({&x, &w, &b})) {
    SavedTensor sx = save(x), sw = save(w);
    bool need_x = needs_grad(x), need_w = needs_grad(w), need_b = needs_grad(b);
    record("ConvolutionBackward0", {&x, &w, &b}, {sx, sw}, out,
           [sx, sw, p, need_x, need_w, need_b](const variable_list& g) -> variable_list {
             Tensor x = sx.unpack(), w = sw.unpack(), gx, gw, gb;
             if (GradMode::is_enabled()) {  // create_graph: keep the graph
               if (need_x) gx = input_grad_op(g[0], w, p);
               if (need_w) gw = weight_grad_op(x, g[0], p);
               if (need_b) gb = g[0].sum({0, 2, 3});
               return {gx, gw, gb};
             }
             // One oneDNN pass computes the weight and bias gradients together.
             if (need_x) gx = input_grad_raw(g[0], w, p);
             if (need_w || need_b) std::tie(gw, gb) = weight_grad_raw(x, g[0], p, need_b);
             return {gx, need_w ? gw : Tensor(), gb};
           });
  }
  return out;
}

Tensor input_grad_op(const Tensor& g, const Tensor& w, const ConvParams& p) {
  Tensor out = input_grad_raw(g, w, p);
  if (any_requires_grad({&g, &w})) {
    SavedTensor sg = save(g), sw = save(w);
    record("ConvolutionBackwardInput", {&g, &w}, {sg, sw}, out,
           [sg, sw, p](const variable_list& G) -> variable_list {
             return {conv_op(G[0], sw.unpack(), Tensor(), p), weight_grad_op(G[0], sg.unpack(), p)};
           });
  }
  return out;
}

Tensor weight_grad_op(const Tensor& x, const Tensor& g, const ConvParams& p) {
  Tensor out = weight_grad_raw(x, g, p, false).first;
  if (any_requires_grad({&x, &g})) {
    SavedTensor sx = save(x), sg = save(g);
    record("ConvolutionBackwardWeight", {&x, &g}, {sx, sg}, out,
           [sx, sg, p](const variable_list& G) -> variable_list {
             return {input_grad_op(sg.unpack(), G[0], p), conv_op(sx.unpack(), G[0], Tensor(), p)};
           });
  }
  return out;
}

// ---- argument checks ----

// stride/padding/dilation: one value for every spatial dim, or one per dim.
DimVector expand_param(const char* op, const char* name, IntArrayRef v, int64_t nd) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd,
              "{}: expected {} to be a single integer value or a list of {} values to match the convolution "
              "dimensions, but got {}={}",
              op, name, nd, name, shape_str(v));
  DimVector out(nd);
  for (int64_t i = 0; i < nd; ++i) out[i] = v[v.size() == 1 ? 0 : i];
  return out;
}

bool is_16bit(ScalarType t) { return t == ScalarType::BFloat16 || t == ScalarType::Float16; }

// Checks shared by every convolution; nd spatial dims (1 or 2).
void check_common(const char* op, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, int64_t nd,
                  int64_t groups, const char* layout) {
  EMBER_CHECK(x.dim() == nd + 2, "{}: expected {}-D input {}, got {}{}", op, nd + 2, layout, shape_str(x.sizes()),
              x.dim() == nd + 1 ? "; add a batch dimension with unsqueeze(0)" : "");
  EMBER_CHECK(w.dim() == nd + 2, "{}: expected {}-D weight, got weight of size {}", op, nd + 2,
              shape_str(w.sizes()));
  EMBER_CHECK_TYPE(x.dtype() == w.dtype(),
                   "{}: expected input and weight to have the same dtype, but got input {} and weight {}; "
                   "convert one with .to(dtype)",
                   op, to_string(x.dtype()), to_string(w.dtype()));
  // Integers convolve exactly, wrapping on overflow as PyTorch's CPU kernels do.
  EMBER_CHECK_TYPE(x.dtype() != kBool, "{}: expected a floating-point or integer input, got {}", op,
                   to_string(x.dtype()));
  if (b) {
    EMBER_CHECK_TYPE(b->dtype() == x.dtype(),
                     "{}: expected bias to have the same dtype as input ({}), but got {}", op,
                     to_string(x.dtype()), to_string(b->dtype()));
  }
  EMBER_CHECK(groups > 0, "{}: non-positive groups is not supported, got groups={}", op, groups);
}

// Checked before divisibility, which 0 rows would pass (PyTorch's order).
void check_weight_rows(const char* op, const Tensor& weight, int64_t groups) {
  EMBER_CHECK(weight.size(0) >= groups,
              "{}: given groups={}, expected weight to be at least {} at dimension 0, but got weight of size {} instead",
              op, groups, groups, shape_str(weight.sizes()));
}

void check_geometry(const char* op, IntArrayRef stride, IntArrayRef dilation, IntArrayRef pad_l,
                    IntArrayRef pad_r) {
  for (int64_t s : stride) EMBER_CHECK(s > 0, "{}: non-positive stride is not supported, got stride={}", op, shape_str(stride));
  for (int64_t d : dilation)
    EMBER_CHECK(d > 0, "{}: non-positive dilation is not supported, got dilation={}", op, shape_str(dilation));
  for (size_t i = 0; i < pad_l.size(); ++i)
    EMBER_CHECK(pad_l[i] >= 0 && pad_r[i] >= 0, "{}: negative padding is not supported, got padding={}", op,
                shape_str(pad_l));
}

// Shared body of conv1d/conv2d: pad_l/pad_r per spatial dim.
Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   int64_t nd, DimVector stride, DimVector pad_l, DimVector pad_r, DimVector dilation,
                   int64_t groups, bool native_bf16 = false) {
  if (autocasts(input) || autocasts(weight)) {
    AutocastGuard off(false);
    // Native: float32 tensors throughout, bf16 products inside the kernels
    // (Note [native bf16 convolution]); else the operands are rounded here.
    if (autocast_native_bf16() && input.dtype() == kFloat32 && weight.dtype() == kFloat32)
      return convolution(op, input, weight, bias, nd, std::move(stride), std::move(pad_l), std::move(pad_r),
                         std::move(dilation), groups, true);
    return convolution(op, bf16_rounded(input), bf16_rounded(weight), bias, nd, std::move(stride), std::move(pad_l),
                       std::move(pad_r), std::move(dilation), groups);
  }
  check_geometry(op, stride, dilation, pad_l, pad_r);
  const int64_t c_in = input.size(1), c_out = weight.size(0);
  check_weight_rows(op, weight, groups);
  EMBER_CHECK(c_out % groups == 0,
              "{}: given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
              "size {} instead",
              op, groups, groups, shape_str(weight.sizes()));
  EMBER_CHECK(c_in == weight.size(1) * groups,
              "{}: given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels "
              "instead",
              op, groups, shape_str(weight.sizes()), shape_str(input.sizes()), weight.size(1) * groups, c_in);
  if (bias) {
    EMBER_CHECK(bias->dim() == 1 && bias->size(0) == c_out,
                "{}: given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of "
                "size {} instead",
                op, shape_str(weight.sizes()), c_out, shape_str(bias->sizes()));
  }
  DimVector padded(nd), kernel(nd);
  bool fits = true;
  for (int64_t i = 0; i < nd; ++i) {
    padded[i] = input.size(2 + i) + pad_l[i] + pad_r[i];
    kernel[i] = dilation[i] * (weight.size(2 + i) - 1) + 1;
    fits = fits && padded[i] >= kernel[i];
  }
  EMBER_CHECK(fits,
              "{}: calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater "
              "than actual input size",
              op, fmt::join(padded, " x "), fmt::join(kernel, " x "));
  if (is_16bit(input.dtype())) {
    // Computed in float32 and rounded once, as PyTorch's CPU kernels accumulate.
    std::optional<Tensor> b32 = bias ? std::optional<Tensor>(bias->to(kFloat32)) : std::nullopt;
    return convolution(op, input.to(kFloat32), weight.to(kFloat32), b32, nd, stride, pad_l, pad_r, dilation, groups)
        .to(input.dtype());
  }
  // conv1d is conv2d over a height-1 image.
  Tensor x = nd == 1 ? input.unsqueeze(2) : input, w = nd == 1 ? weight.unsqueeze(2) : weight;
  if (nd == 1) {
    stride = {1, stride[0]};
    dilation = {1, dilation[0]};
    pad_l = {0, pad_l[0]};
    pad_r = {0, pad_r[0]};
  }
  ConvParams p;
  p.bf16 = native_bf16;
  p.n = x.size(0);
  p.c_in = c_in;
  p.c_out = c_out;
  p.groups = groups;
  p.ih = x.size(2);
  p.iw = x.size(3);
  p.kh = w.size(2);
  p.kw = w.size(3);
  p.sh = stride[0];
  p.sw = stride[1];
  p.dh = dilation[0];
  p.dw = dilation[1];
  p.pt = pad_l[0];
  p.pb = pad_r[0];
  p.pl = pad_l[1];
  p.pr = pad_r[1];
  p.oh = (p.ih + p.pt + p.pb - p.dh * (p.kh - 1) - 1) / p.sh + 1;
  p.ow = (p.iw + p.pl + p.pr - p.dw * (p.kw - 1) - 1) / p.sw + 1;
  Tensor out = conv_op(x, w, bias ? *bias : Tensor(), p);
  return nd == 1 ? out.squeeze(2) : out;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv1d";
  check_common(op, input, weight, bias, 1, groups, "(N, C, L)");
  DimVector pad = expand_param(op, "padding", padding, 1);
  return convolution(op, input, weight, bias, 1, expand_param(op, "stride", stride, 1), pad, pad,
                     expand_param(op, "dilation", dilation, 1), groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv2d";
  check_common(op, input, weight, bias, 2, groups, "(N, C, H, W)");
  DimVector pad = expand_param(op, "padding", padding, 2);
  return convolution(op, input, weight, bias, 2, expand_param(op, "stride", stride, 2), pad, pad,
                     expand_param(op, "dilation", dilation, 2), groups);
}

Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv2d";
  check_common(op, input, weight, bias, 2, groups, "(N, C, H, W)");
  DimVector s = expand_param(op, "stride", stride, 2), d = expand_param(op, "dilation", dilation, 2);
  DimVector pad_l{0, 0}, pad_r{0, 0};
  if (padding == "same") {
    EMBER_CHECK(s[0] == 1 && s[1] == 1,
                "conv2d: padding='same' is not supported for strided convolutions, got stride={}; use an "
                "explicit padding",
                shape_str(s));
    // An even kernel needs an odd total: the extra row/column goes at the end, as in PyTorch.
    for (int i = 0; i < 2; ++i) {
      int64_t total = d[i] * (weight.size(2 + i) - 1);
      pad_l[i] = total / 2;
      pad_r[i] = total - pad_l[i];
    }
  } else {
    EMBER_CHECK(padding == "valid", "conv2d: invalid padding string: '{}' (expected 'same' or 'valid')", padding);
  }
  return convolution(op, input, weight, bias, 2, s, pad_l, pad_r, d, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  const char* op = "conv_transpose2d";
  check_common(op, input, weight, bias, 2, groups, "(N, C, H, W)");
  DimVector s = expand_param(op, "stride", stride, 2), pad = expand_param(op, "padding", padding, 2),
            opad = expand_param(op, "output_padding", output_padding, 2),
            d = expand_param(op, "dilation", dilation, 2);
  check_geometry(op, s, d, pad, pad);
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(opad[i] >= 0 && (opad[i] < s[i] || opad[i] < d[i]),
                "{}: output padding must be smaller than either stride or dilation, but got output_padding={}, "
                "stride={} and dilation={}",
                op, shape_str(opad), shape_str(s), shape_str(d));
  }
  const int64_t c_in = input.size(1), c_out = weight.size(1) * groups;
  check_weight_rows(op, weight, groups);
  EMBER_CHECK(weight.size(0) == c_in,
              "{}: given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} "
              "channels instead",
              op, shape_str(weight.sizes()), shape_str(input.sizes()), weight.size(0), c_in);
  EMBER_CHECK(c_in % groups == 0,
              "{}: given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of size "
              "{} instead",
              op, groups, groups, shape_str(weight.sizes()));
  if (bias) {
    EMBER_CHECK(bias->dim() == 1 && bias->size(0) == c_out,
                "{}: given transposed=1, weight of size {}, expected bias to be 1-dimensional with {} elements, "
                "but got bias of size {} instead",
                op, shape_str(weight.sizes()), c_out, shape_str(bias->sizes()));
  }
  if (is_16bit(input.dtype())) {
    std::optional<Tensor> b32 = bias ? std::optional<Tensor>(bias->to(kFloat32)) : std::nullopt;
    return conv_transpose2d(input.to(kFloat32), weight.to(kFloat32), b32, s, pad, opad, groups, d)
        .to(input.dtype());
  }
  // The transpose of a convolution whose input is our output: that conv's
  // output_padding columns are end padding it never reads (pb = pad - opad).
  ConvParams p;
  p.n = input.size(0);
  p.c_in = c_out;
  p.c_out = c_in;
  p.groups = groups;
  p.oh = input.size(2);
  p.ow = input.size(3);
  p.kh = weight.size(2);
  p.kw = weight.size(3);
  p.sh = s[0];
  p.sw = s[1];
  p.dh = d[0];
  p.dw = d[1];
  p.pt = pad[0];
  p.pl = pad[1];
  p.pb = pad[0] - opad[0];
  p.pr = pad[1] - opad[1];
  p.ih = (p.oh - 1) * p.sh - 2 * pad[0] + p.dh * (p.kh - 1) + opad[0] + 1;
  p.iw = (p.ow - 1) * p.sw - 2 * pad[1] + p.dw * (p.kw - 1) + opad[1] + 1;
  EMBER_CHECK(p.ih > 0 && p.iw > 0,
              "{}: given input size per channel: ({} x {}), calculated output size per channel: ({} x {}). Output "
              "size is too small",
              op, p.oh, p.ow, p.ih, p.iw);
  Tensor out = input_grad_op(input, weight, p);
  if (bias) out = out + bias->view({1, c_out, 1, 1});
  return out;
}

}  // namespace ember

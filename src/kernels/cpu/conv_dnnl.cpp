// The CPU convolution kernels: oneDNN's convolution forward, backward-data
// and backward-weights primitives for float32 (cached by geometry, plain
// NCHW/OIHW at the boundary, blocked layouts inside), with bf16 products
// under native autocast (Note [native bf16 convolution]); few input
// channels at stride 1 go to conv_small_cin.cpp instead (float32 even under
// autocast: a bf16 kernel would pad c_in to 16 and do 16x the work); the
// reference loops (conv_ref.cpp) for every other dtype.
#include "ember/core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/nn.h"

namespace ember {
namespace {

using dnnl::memory;
using namespace dnnl_util;

enum class Kind : int64_t { Forward, BackwardInput, BackwardWeight };

using Key = std::array<int64_t, 23>;

Key make_key(Kind kind, const ConvParams& p, bool bias) {
  return {static_cast<int64_t>(kind), get_num_threads(), p.n, p.c_in, p.c_out, p.groups, p.ih, p.iw, p.oh, p.ow,
          p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pb, p.pl, p.pr, bias, static_cast<int64_t>(p.dtype), p.bf16};
}

// Note [native bf16 convolution]: with p.bf16 the user tensors stay float32
// and the primitive's operands are bf16 (src, weights, and diff_dst in the
// backward passes) while what it produces (dst, diff_src, diff_weights,
// diff_bias) is float32. The reorders that already bridge NCHW and oneDNN's
// blocked layouts convert the type on the way, so the bf16 path makes no
// more passes over memory than the float32 one, and the float32 outputs
// need no rounding pass after it.
struct Descs {
  memory::desc src, wei, bias, dst;            // plain user layouts
  memory::desc src_any, wei_any, dst_any;      // let oneDNN choose
  memory::desc dst_in_any;                     // dst as an input (backward's diff_dst)
  memory::desc src_out_any, wei_out_any;       // src and weights as outputs (their gradients)
  memory::dims strides, dilates, pad_l, pad_r;
};

Descs make_descs(const ConvParams& p) {
  const auto f32 = memory::data_type::f32;
  const auto in_t = p.bf16 ? memory::data_type::bf16 : f32;  // what the products read
  using tag = memory::format_tag;
  Descs d;
  memory::dims src{p.n, p.c_in, p.ih, p.iw}, dst{p.n, p.c_out, p.oh, p.ow};
  memory::dims wei = p.groups == 1 ? memory::dims{p.c_out, p.c_in, p.kh, p.kw}
                                   : memory::dims{p.groups, p.c_out / p.groups, p.c_in / p.groups, p.kh, p.kw};
  d.src = memory::desc(src, f32, tag::nchw);
  d.dst = memory::desc(dst, f32, tag::nchw);
  d.wei = memory::desc(wei, f32, p.groups == 1 ? tag::oihw : tag::goihw);
  d.bias = memory::desc({p.c_out}, f32, tag::a);
  d.src_any = memory::desc(src, in_t, tag::any);
  d.dst_any = memory::desc(dst, f32, tag::any);
  d.dst_in_any = memory::desc(dst, in_t, tag::any);
  d.wei_any = memory::desc(wei, in_t, tag::any);
  d.src_out_any = memory::desc(src, f32, tag::any);
  d.wei_out_any = memory::desc(wei, f32, tag::any);
  d.strides = {p.sh, p.sw};
  d.dilates = {p.dh - 1, p.dw - 1};  // oneDNN counts dilation from 0
  d.pad_l = {p.pt, p.pl};
  d.pad_r = {p.pb, p.pr};
  return d;
}

// dst: d.dst_any for the forward primitive, d.dst_in_any for the backward
// passes' hint (whose diff_dst is an input, bf16 on the bf16 path).
dnnl::convolution_forward::primitive_desc forward_pd(const Descs& d, const memory::desc& dst, bool bias,
                                                     const dnnl::primitive_attr& attr) {
  using fwd = dnnl::convolution_forward;
  auto desc = bias ? fwd::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src_any,
                               d.wei_any, d.bias, dst, d.strides, d.dilates, d.pad_l, d.pad_r)
                   : fwd::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src_any,
                               d.wei_any, dst, d.strides, d.dilates, d.pad_l, d.pad_r);
  return fwd::primitive_desc(desc, attr, cpu_engine());
}

Prim make_prim(Kind kind, const ConvParams& p, bool bias) {
  Prim r;
  try {
    Descs d = make_descs(p);
    auto attr = user_scratchpad();
    auto hint = forward_pd(d, d.dst_in_any, bias, dnnl::primitive_attr());
    if (kind == Kind::Forward) {
      auto pd = forward_pd(d, d.dst_any, bias, attr);
      if (is_ref_impl(pd.impl_info_str())) return r;
      r.prim = dnnl::convolution_forward(pd);
      r.scratch = pd.scratchpad_desc();
      r.operands.push_back(make_operand(DNNL_ARG_SRC, false, d.src, pd.src_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_WEIGHTS, false, d.wei, pd.weights_desc()));
      if (bias) r.operands.push_back(make_operand(DNNL_ARG_BIAS, false, d.bias, pd.bias_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_DST, true, d.dst, pd.dst_desc()));
    } else if (kind == Kind::BackwardInput) {
      using bwd = dnnl::convolution_backward_data;
      bwd::desc desc(dnnl::algorithm::convolution_direct, d.src_out_any, d.wei_any, d.dst_in_any, d.strides,
                     d.dilates, d.pad_l, d.pad_r);
      bwd::primitive_desc pd(desc, attr, cpu_engine(), hint);
      if (is_ref_impl(pd.impl_info_str())) return r;
      r.prim = bwd(pd);
      r.scratch = pd.scratchpad_desc();
      r.operands.push_back(make_operand(DNNL_ARG_DIFF_DST, false, d.dst, pd.diff_dst_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_WEIGHTS, false, d.wei, pd.weights_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_DIFF_SRC, true, d.src, pd.diff_src_desc()));
    } else {
      using bwd = dnnl::convolution_backward_weights;
      auto desc = bias ? bwd::desc(dnnl::algorithm::convolution_direct, d.src_any, d.wei_out_any, d.bias,
                                   d.dst_in_any, d.strides, d.dilates, d.pad_l, d.pad_r)
                       : bwd::desc(dnnl::algorithm::convolution_direct, d.src_any, d.wei_out_any, d.dst_in_any,
                                   d.strides, d.dilates, d.pad_l, d.pad_r);
      bwd::primitive_desc pd(desc, attr, cpu_engine(), hint);
      if (is_ref_impl(pd.impl_info_str())) return r;
      r.prim = bwd(pd);
      r.scratch = pd.scratchpad_desc();
      r.operands.push_back(make_operand(DNNL_ARG_SRC, false, d.src, pd.src_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_DIFF_DST, false, d.dst, pd.diff_dst_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_DIFF_WEIGHTS, true, d.wei, pd.diff_weights_desc()));
      if (bias) r.operands.push_back(make_operand(DNNL_ARG_DIFF_BIAS, true, d.bias, pd.diff_bias_desc()));
    }
    r.ok = true;
  } catch (const dnnl::error&) {
    r.ok = false;  // a geometry oneDNN rejects: the reference loop handles it
  }
  return r;
}

// Runs through oneDNN; false when it has no fast kernel for this geometry.
// A bf16 request oneDNN has no fast kernel for runs in float32 instead.
bool run_dnnl(Kind kind, const ConvParams& p, bool bias, const std::vector<void*>& ptrs) {
  static PrimCache<std::tuple_size_v<Key>> cache;
  auto prim = cache.get(make_key(kind, p, bias), [&] { return make_prim(kind, p, bias); });
  if (!prim->ok) {
    if (!p.bf16) return false;
    ConvParams f = p;
    f.bf16 = false;
    return run_dnnl(kind, f, bias, ptrs);
  }
  execute(*prim, ptrs);
  return true;
}

bool empty_geometry(const ConvParams& p) {
  return p.n == 0 || p.c_in == 0 || p.c_out == 0 || p.oh <= 0 || p.ow <= 0 || p.ih <= 0 || p.iw <= 0;
}

void* mut(const void* p) { return const_cast<void*>(p); }

void conv2d_cpu(const ConvParams& p, const void* in, const void* w, const void* bias, void* out) {
  if (conv2d_small_cin_applies(p)) return conv2d_small_cin(p, in, w, bias, out);
  if (p.dtype == ScalarType::Float32 && !empty_geometry(p) &&
      run_dnnl(Kind::Forward, p, bias != nullptr,
               bias ? std::vector<void*>{mut(in), mut(w), mut(bias), out} : std::vector<void*>{mut(in), mut(w), out}))
    return;
  conv2d_ref(p, in, w, bias, out);
}

void conv2d_backward_input_cpu(const ConvParams& p, const void* grad_out, const void* w, void* grad_in) {
  if (p.dtype == ScalarType::Float32 && !empty_geometry(p) &&
      run_dnnl(Kind::BackwardInput, p, false, {mut(grad_out), mut(w), grad_in}))
    return;
  conv2d_backward_input_ref(p, grad_out, w, grad_in);
}

void conv2d_backward_weight_cpu(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                void* grad_bias) {
  if (conv2d_small_cin_applies(p)) return conv2d_small_cin_weight_grad(p, in, grad_out, grad_w, grad_bias);
  if (p.dtype == ScalarType::Float32 && !empty_geometry(p) &&
      run_dnnl(Kind::BackwardWeight, p, grad_bias != nullptr,
               grad_bias ? std::vector<void*>{mut(in), mut(grad_out), grad_w, grad_bias}
                         : std::vector<void*>{mut(in), mut(grad_out), grad_w}))
    return;
  conv2d_backward_weight_ref(p, in, grad_out, grad_w, grad_bias);
}

}  // namespace

EMBER_REGISTER_KERNEL(conv2d, CPU, conv2d_cpu);
EMBER_REGISTER_KERNEL(conv2d_backward_input, CPU, conv2d_backward_input_cpu);
EMBER_REGISTER_KERNEL(conv2d_backward_weight, CPU, conv2d_backward_weight_cpu);

}  // namespace ember

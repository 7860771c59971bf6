// The static int8 kernels on oneDNN (kernels/qstatic.h). oneDNN 2.x folds
// the scales into per-channel output scales: dst = post_ops(oscale[c] *
// (acc + bias')), so the float bias is handed over divided by sx * sw[c] and
// oscale[c] = sx * sw[c] (/ s_dst for a uint8 output). The primitive picks
// its layouts (nhwc-like for int8); the user's NCHW operands are reordered in
// and out once per call, at one byte per element for the int8 ones.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <vector>

#include "kernels/cpu/dnnl_steps.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/qstatic.h"

namespace ember {

namespace {

using dnnl::memory;
using dnnl_steps::Block;
using dnnl_steps::conv_weight_dims;
using dnnl_steps::end_pad;
using dnnl_steps::packed_copy;
using dnnl_steps::give_scratchpads;
using dnnl_steps::reorder_step;
using dnnl_steps::Step;
using dnnl_util::cpu_engine;
using dnnl_util::cpu_stream;
using dnnl_util::is_ref_impl;
using tag = memory::format_tag;
using dt = memory::data_type;

dt dnnl_type(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return dt::u8;
    case ScalarType::Int8: return dt::s8;
    default: return dt::f32;
  }
}

// Output scales, ReLU and the bias in accumulator units, per output channel.
struct Scales {
  std::vector<float> oscale, bias;
};

Scales scales_of(const QActivation& src, const QEpilogue& out, int64_t channels, const float* w_scale,
                 const float* bias) {
  Scales s;
  const float dst_div = out.dst_dtype == ScalarType::UInt8 ? out.dst_scale : 1.f;
  for (int64_t c = 0; c < channels; ++c) {
    const float sxw = src.scale * w_scale[c];
    s.oscale.push_back(sxw / dst_div);
    s.bias.push_back(bias ? bias[c] / sxw : 0.f);
  }
  return s;
}

dnnl::primitive_attr attr_of(const QEpilogue& out, const std::vector<float>& oscale, int mask) {
  dnnl::primitive_attr attr = dnnl_util::user_scratchpad();
  attr.set_output_scales(mask, oscale);
  if (out.relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  return attr;
}

Block copy_of(const std::vector<float>& v) {
  Block b(v.size() * sizeof(float));
  std::memcpy(b.get(), v.data(), v.size() * sizeof(float));
  return b;
}

}  // namespace

// ---- PreparedQConv ----

struct PreparedQConv::Impl {
  std::string impl;
  Block weights, bias, conv_buf, pool_buf, src_buf, scratch;
  memory user_src, user_dst;
  std::vector<Step> steps;
};

PreparedQConv::PreparedQConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedQConv::~PreparedQConv() = default;
std::string PreparedQConv::impl() const { return impl_->impl; }

std::unique_ptr<PreparedQConv> PreparedQConv::make(const QConvSpec& s, const int8_t* w, const float* w_scale,
                                                   const float* bias) {
  const ConvParams& p = s.p;
  if (p.n <= 0 || p.c_in <= 0 || p.c_out <= 0 || p.oh <= 0 || p.ow <= 0) return nullptr;
  // Max pooling without dilation only (as PreparedConv): end_pad has no dilation term.
  if (s.pool && (!s.pool->max || s.pool->params.dh != 1 || s.pool->params.dw != 1)) return nullptr;
  auto r = std::make_unique<Impl>();
  try {
    auto& eng = cpu_engine();
    using fwd = dnnl::convolution_forward;
    const memory::dims wdims = conv_weight_dims(p);
    const dt src_t = dnnl_type(s.src.dtype), dst_t = dnnl_type(s.out.dst_dtype);
    memory::desc src_any({p.n, p.c_in, p.ih, p.iw}, src_t, tag::any), dst_any({p.n, p.c_out, p.oh, p.ow}, dst_t, tag::any);
    memory::desc wei_any(wdims, dt::s8, tag::any), bias_md({p.c_out}, dt::f32, tag::a);
    fwd::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wei_any, bias_md,
                dst_any, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.pt, p.pl}, {p.pb, p.pr});
    const Scales sc = scales_of(s.src, s.out, p.c_out, w_scale, bias);
    fwd::primitive_desc pd(d, attr_of(s.out, sc.oscale, 1 << 1), eng);
    if (is_ref_impl(pd.impl_info_str())) return nullptr;
    r->impl = pd.impl_info_str();
    r->weights = packed_copy(memory::desc(wdims, dt::s8, p.groups == 1 ? tag::oihw : tag::goihw), w, pd.weights_desc());
    r->bias = copy_of(sc.bias);

    const int64_t out_h = s.pool ? s.pool->params.oh : p.oh, out_w = s.pool ? s.pool->params.ow : p.ow;
    r->user_src = memory(memory::desc({p.n, p.c_in, p.ih, p.iw}, src_t, tag::nchw), eng, nullptr);
    r->user_dst = memory(memory::desc({p.n, p.c_out, out_h, out_w}, dst_t, tag::nchw), eng, nullptr);
    memory src = r->user_src;
    if (pd.src_desc() != r->user_src.get_desc()) {
      r->src_buf = Block(pd.src_desc().get_size());
      src = memory(pd.src_desc(), eng, r->src_buf.get());
      r->steps.push_back(reorder_step(r->user_src, src));
    }
    memory conv_dst;
    if (!s.pool && pd.dst_desc() == r->user_dst.get_desc()) {
      conv_dst = r->user_dst;
    } else {
      r->conv_buf = Block(pd.dst_desc().get_size());
      conv_dst = memory(pd.dst_desc(), eng, r->conv_buf.get());
    }
    Step conv{fwd(pd),
              {{DNNL_ARG_SRC, src},
               {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), eng, r->weights.get())},
               {DNNL_ARG_BIAS, memory(bias_md, eng, r->bias.get())},
               {DNNL_ARG_DST, conv_dst}},
              pd.scratchpad_desc()};
    r->steps.push_back(std::move(conv));
    memory last = conv_dst;
    if (s.pool) {
      const PoolParams& q = s.pool->params;
      memory::desc pdst({p.n, p.c_out, q.oh, q.ow}, dst_t, tag::any);
      memory::dims pr{end_pad(q.oh, q.sh, q.kh, q.ih, q.pt), end_pad(q.ow, q.sw, q.kw, q.iw, q.pl)};
      dnnl::pooling_v2_forward::desc pdsc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
                                          pd.dst_desc(), pdst, {q.sh, q.sw}, {q.kh, q.kw}, {q.dh - 1, q.dw - 1},
                                          {q.pt, q.pl}, pr);
      dnnl::pooling_v2_forward::primitive_desc ppd(pdsc, dnnl_util::user_scratchpad(), eng);
      if (is_ref_impl(ppd.impl_info_str())) return nullptr;
      memory pooled;
      if (ppd.dst_desc() == r->user_dst.get_desc()) {
        pooled = r->user_dst;
      } else {
        r->pool_buf = Block(ppd.dst_desc().get_size());
        pooled = memory(ppd.dst_desc(), eng, r->pool_buf.get());
      }
      r->steps.push_back({dnnl::pooling_v2_forward(ppd), {{DNNL_ARG_SRC, conv_dst}, {DNNL_ARG_DST, pooled}},
                          ppd.scratchpad_desc()});
      last = pooled;
    }
    if (last.get_data_handle() != r->user_dst.get_data_handle() || last.get_desc() != r->user_dst.get_desc())
      r->steps.push_back(reorder_step(last, r->user_dst));
    std::vector<Step*> steps;
    for (Step& st : r->steps) steps.push_back(&st);
    r->scratch = give_scratchpads(steps);
  } catch (const dnnl::error&) {
    return nullptr;  // a geometry oneDNN rejects: the reference loop runs it
  }
  return std::unique_ptr<PreparedQConv>(new PreparedQConv(std::move(r)));
}

void PreparedQConv::run(const void* src, void* dst) {
  impl_->user_src.set_data_handle(const_cast<void*>(src));
  impl_->user_dst.set_data_handle(dst);
  for (const Step& st : impl_->steps) st.run();
}

// ---- PreparedQLinear ----

struct PreparedQLinear::Impl {
  std::string impl;
  Block weights, bias, scratch;
  memory user_src, user_dst;
  Step step;
};

PreparedQLinear::PreparedQLinear(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedQLinear::~PreparedQLinear() = default;
std::string PreparedQLinear::impl() const { return impl_->impl; }

std::unique_ptr<PreparedQLinear> PreparedQLinear::make(const QLinearSpec& s, const int8_t* w, const float* w_scale,
                                                       const float* bias) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return nullptr;
  auto r = std::make_unique<Impl>();
  try {
    auto& eng = cpu_engine();
    memory::desc src_md({s.m, s.k}, dnnl_type(s.src.dtype), tag::ab), dst_md({s.m, s.n}, dnnl_type(s.out.dst_dtype), tag::ab);
    memory::desc wei_any({s.k, s.n}, dt::s8, tag::any), bias_md({1, s.n}, dt::f32, tag::ab);
    const Scales sc = scales_of(s.src, s.out, s.n, w_scale, bias);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, bias_md, dst_md), attr_of(s.out, sc.oscale, 1 << 1),
                                    eng);
    if (is_ref_impl(pd.impl_info_str())) return nullptr;
    r->impl = pd.impl_info_str();
    // The [n, k] weight read as its [k, n] transpose.
    r->weights = packed_copy(memory::desc({s.k, s.n}, dt::s8, tag::ba), w, pd.weights_desc());
    r->bias = copy_of(sc.bias);
    r->user_src = memory(src_md, eng, nullptr);
    r->user_dst = memory(dst_md, eng, nullptr);
    r->step = {dnnl::matmul(pd),
               {{DNNL_ARG_SRC, r->user_src},
                {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), eng, r->weights.get())},
                {DNNL_ARG_BIAS, memory(bias_md, eng, r->bias.get())},
                {DNNL_ARG_DST, r->user_dst}},
               pd.scratchpad_desc()};
    r->scratch = give_scratchpads({&r->step});
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<PreparedQLinear>(new PreparedQLinear(std::move(r)));
}

void PreparedQLinear::run(const void* src, void* dst) {
  impl_->user_src.set_data_handle(const_cast<void*>(src));
  impl_->user_dst.set_data_handle(dst);
  impl_->step.run();
}

}  // namespace ember

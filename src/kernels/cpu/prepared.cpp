// Note [prepared kernels]: the generic conv/matmul kernels pay, on every
// call, a primitive-cache lookup under a mutex, a dnnl::memory and an
// argument map per operand, a reorder of the weights into the primitive's
// blocked layout, and reorders of the input and output; a fused activation
// is a second pass over the output. At batch 1 that overhead is most of a
// small CNN's time. A prepared kernel does all of it once, when the
// inference runtime prepares a graph for an input size:
//   - the primitive is created with its epilogue as oneDNN post-ops
//     (eltwise relu/swish/gelu, sum for a residual add) so the output is
//     written once;
//   - the weights are reordered once into the layout the primitive chose
//     (format_tag::any) and kept;
//   - every primitive's dnnl::memory objects and argument maps are built
//     once; a call only points the user memories at this call's buffers
//     (set_data_handle);
//   - intermediates stay in the primitive's blocked layout (nChw8c/16c):
//     conv -> activation -> pool runs blocked end to end, reordering to
//     plain NCHW once, on the (4x smaller) pooled output;
//   - reorder targets and scratchpads are owned buffers, allocated once.
// The numbers are the generic path's up to float rounding of the post-ops
// (oneDNN's erf/exp approximations for gelu/silu, ~1 ulp); relu, the sum and
// the pooling are exact.
#include "kernels/prepared.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ember/core/allocator.h"
#include "kernels/cpu/dnnl_steps.h"
#include "kernels/cpu/dnnl_util.h"

namespace ember {

std::optional<FusedActivation> fused_activation_from_name(const std::string& name) {
  if (name == "relu") return FusedActivation::Relu;
  if (name == "silu") return FusedActivation::Silu;
  if (name == "gelu") return FusedActivation::Gelu;
  if (name == "gelu_tanh") return FusedActivation::GeluTanh;
  return std::nullopt;
}

namespace {

using dnnl::memory;
using dnnl_util::cpu_engine;
using dnnl_util::cpu_stream;
using dnnl_util::is_ref_impl;
using dnnl_steps::Block;
using dnnl_steps::conv_weight_dims;
using dnnl_steps::end_pad;
using dnnl_steps::packed_copy;
using dnnl_steps::give_scratchpads;
using dnnl_steps::reorder_step;
using dnnl_steps::Step;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

void append(dnnl::post_ops& po, FusedActivation a) {
  switch (a) {
    case FusedActivation::None: return;
    case FusedActivation::Relu: po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); return;
    case FusedActivation::Silu: po.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f); return;
    case FusedActivation::Gelu: po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f); return;
    case FusedActivation::GeluTanh: po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f); return;
  }
}

dnnl::primitive_attr attr_with(const Epilogue& e) {
  dnnl::primitive_attr attr = dnnl_util::user_scratchpad();
  dnnl::post_ops po;
  append(po, e.act);
  if (e.residual) po.append_sum(1.f);
  append(po, e.post);
  attr.set_post_ops(po);
  return attr;
}

}  // namespace

// ---- blocked layouts (Note [layout propagation]) ----

// Note [layout propagation]: a prepared conv reorders a plain NCHW input
// into the blocked layout its primitive chose (nChw16c on AVX-512) and its
// output back to NCHW. Between two prepared convs both reorders are waste:
// the second primitive would read the first one's blocked output as is. With
// jit::propagate_layouts' output_layout="blocked" the interpreter lets a
// conv leave its output in its primitive's layout (the value's buffer then
// holds that layout, recorded per value for this run) and the next prepared
// conv is made for it (its primitive created on that source layout, or a
// reorder from it where oneDNN prefers another), so a chain of convs
// reorders once at each end. Any other reader (and a graph output) gets a
// plain copy first (reorder_to_plain), so a layout is never misread. A
// layout is used only when its images are contiguous and batch-outermost
// (a chunk of images is a slice) and n images fit the value's buffer (no
// channel padding beyond the NCHW size: a 7-channel output stays NCHW).
class BlockedLayout {
 public:
  memory::desc image;  // one image: dims [1, c, h, w]
  int64_t image_bytes = 0;
};

namespace {

// d for n images, strides kept; nullopt when d's images are not contiguous,
// dense and batch-outermost.
std::optional<memory::desc> with_batch(const memory::desc& d, int64_t n) {
  dnnl_memory_desc_t m = d.data;
  if (m.ndims != 4 || m.format_kind != dnnl_blocked || m.offset0 != 0 || m.padded_offsets[0] != 0) return std::nullopt;
  const dnnl_blocking_desc_t& b = m.format_desc.blocking;
  for (int i = 0; i < b.inner_nblks; ++i)
    if (b.inner_idxs[i] == 0) return std::nullopt;
  if (b.strides[0] != m.padded_dims[1] * m.padded_dims[2] * m.padded_dims[3]) return std::nullopt;
  m.dims[0] = m.padded_dims[0] = n;
  return memory::desc(m);
}

memory::desc plain(int64_t n, int64_t c, int64_t h, int64_t w) { return memory::desc({n, c, h, w}, f32, tag::nchw); }

// d's layout, or null when d is plain NCHW or not usable as a layout.
LayoutRef layout_of(const memory::desc& d) {
  std::optional<memory::desc> one = with_batch(d, 1);
  if (!one) return nullptr;
  const dnnl_memory_desc_t& m = one->data;
  if (*one == plain(1, m.dims[1], m.dims[2], m.dims[3])) return nullptr;
  auto l = std::make_shared<BlockedLayout>();
  l->image = *one;
  l->image_bytes = static_cast<int64_t>(m.format_desc.blocking.strides[0]) * 4;
  return l;
}

memory::desc images(const LayoutRef& l, int64_t n, int64_t c, int64_t h, int64_t w) {
  return l ? *with_batch(l->image, n) : plain(n, c, h, w);
}

}  // namespace

bool same_layout(const LayoutRef& a, const LayoutRef& b) {
  if (!a || !b) return !a && !b;
  return a == b || a->image == b->image;
}

std::string layout_name(const LayoutRef& l) {
  if (!l) return "nchw";
  const dnnl_memory_desc_t& m = l->image.data;
  const dnnl_blocking_desc_t& b = m.format_desc.blocking;
  std::array<int, 4> order{0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  const char letters[] = "nchw";
  std::string s;
  for (int d : order) {
    bool blocked = false;
    for (int i = 0; i < b.inner_nblks; ++i) blocked = blocked || b.inner_idxs[i] == d;
    s += blocked ? static_cast<char>(letters[d] - 'a' + 'A') : letters[d];
  }
  for (int i = 0; i < b.inner_nblks; ++i) s += std::to_string(b.inner_blks[i]) + letters[b.inner_idxs[i]];
  return s;
}

int64_t layout_image_bytes(const BlockedLayout& l) { return l.image_bytes; }

std::array<int64_t, 3> layout_image_dims(const BlockedLayout& l) {
  return {l.image.data.dims[1], l.image.data.dims[2], l.image.data.dims[3]};
}

void reorder_to_plain(const BlockedLayout& l, int64_t n, const void* src, void* dst) {
  if (n <= 0) return;
  auto& eng = cpu_engine();
  const auto [c, h, w] = layout_image_dims(l);
  memory from(*with_batch(l.image, n), eng, const_cast<void*>(src)), to(plain(n, c, h, w), eng, dst);
  dnnl::reorder(from, to).execute(cpu_stream(), from, to);
}

// ---- PreparedConv ----

// The work for one chunk length: the user memories whose handles a call
// sets, and the steps in order.
struct ConvPass {
  int64_t n = 0;
  memory user_src, user_dst, user_residual;
  bool residual_in_dst = false;  // the residual is copied into user_dst (the conv writes there, same layout)
  std::vector<Step> steps;
};

struct PreparedConv::Impl {
  ConvParams p;
  Epilogue e;
  bool pooled = false;
  PoolParams pool;
  int64_t chunk = 0;
  std::string impl;
  LayoutRef src_layout, residual_layout, dst_layout;
  int64_t src_image = 0, residual_image = 0, dst_image = 0;  // bytes per image in those layouts
  Block weights, bias, src_buf, conv_buf, pool_buf, scratch;
  std::vector<ConvPass> passes;  // [0]: `chunk` images; [1]: the remainder, if any
};

PreparedConv::PreparedConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedConv::~PreparedConv() = default;
std::string PreparedConv::impl() const { return impl_->impl; }
const LayoutRef& PreparedConv::src_layout() const { return impl_->src_layout; }
const LayoutRef& PreparedConv::residual_layout() const { return impl_->residual_layout; }
const LayoutRef& PreparedConv::dst_layout() const { return impl_->dst_layout; }

namespace {

// With `src` the primitive reads that layout; else it picks one (any).
dnnl::convolution_forward::primitive_desc conv_pd(const ConvParams& p, int64_t n, bool bias, const Epilogue& e,
                                                  const memory::desc* src = nullptr) {
  using fwd = dnnl::convolution_forward;
  memory::desc s = src ? *src : memory::desc({n, p.c_in, p.ih, p.iw}, f32, tag::any);
  memory::desc dst({n, p.c_out, p.oh, p.ow}, f32, tag::any);
  memory::desc wei(conv_weight_dims(p), f32, tag::any), b({p.c_out}, f32, tag::a);
  memory::dims strides{p.sh, p.sw}, dil{p.dh - 1, p.dw - 1}, pl{p.pt, p.pl}, pr{p.pb, p.pr};
  auto d = bias ? fwd::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, s, wei, b, dst,
                            strides, dil, pl, pr)
                : fwd::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, s, wei, dst,
                            strides, dil, pl, pr);
  return fwd::primitive_desc(d, attr_with(e), cpu_engine());
}

std::optional<dnnl::pooling_forward::primitive_desc> pool_pd(const FusedPool& fp, int64_t n,
                                                             const memory::desc& src) {
  const PoolParams& q = fp.params;
  dnnl::algorithm algo;
  if (fp.max) algo = dnnl::algorithm::pooling_max;
  else algo = q.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                  : dnnl::algorithm::pooling_avg_exclude_padding;
  memory::desc dst({n, q.c, q.oh, q.ow}, f32, tag::any);
  memory::dims pr{end_pad(q.oh, q.sh, q.kh, q.ih, q.pt), end_pad(q.ow, q.sw, q.kw, q.iw, q.pl)};
  dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, algo, src, dst, {q.sh, q.sw}, {q.kh, q.kw},
                                {q.pt, q.pl}, pr);
  dnnl::pooling_forward::primitive_desc pd(d, dnnl_util::user_scratchpad(), cpu_engine());
  if (is_ref_impl(pd.impl_info_str())) return std::nullopt;
  return pd;
}

// The primitive for `n` images reading the source layout `src` (null:
// NCHW): the one oneDNN picks, or, when that one wants another layout, one
// made on `src` itself if oneDNN has a JIT kernel for it (saving the
// reorder); `explicit_src` says which was taken for the first chunk length,
// so every length makes the same choice.
dnnl::convolution_forward::primitive_desc conv_pd_on(const ConvParams& p, int64_t n, bool bias, const Epilogue& e,
                                                     const LayoutRef& src, std::optional<bool>& explicit_src) {
  const memory::desc user = images(src, n, p.c_in, p.ih, p.iw);
  if (explicit_src == std::optional<bool>(true)) return conv_pd(p, n, bias, e, &user);
  auto pd = conv_pd(p, n, bias, e);
  if (!explicit_src && src && pd.src_desc() != user) {
    try {
      auto on_src = conv_pd(p, n, bias, e, &user);
      if (!is_ref_impl(on_src.impl_info_str())) {
        explicit_src = true;
        return on_src;
      }
    } catch (const dnnl::error&) {
      // no kernel reads this layout: reorder it
    }
  }
  explicit_src = false;
  return pd;
}

}  // namespace

std::unique_ptr<PreparedConv> PreparedConv::make(const ConvParams& p, const void* weight, const void* bias,
                                                 const Epilogue& e, const FusedPool* pool, int64_t chunk,
                                                 const ConvLayouts& layouts) {
  if (p.dtype != ScalarType::Float32 || p.n <= 0 || p.c_in <= 0 || p.c_out <= 0 || p.oh <= 0 || p.ow <= 0) return nullptr;
  if (pool) {
    const PoolParams& q = pool->params;
    if (q.dh != 1 || q.dw != 1 || e.residual || q.c != p.c_out || q.ih != p.oh || q.iw != p.ow) return nullptr;
    // oneDNN's include-padding divisor counts ceil_mode's extra end padding; PyTorch's does not.
    if (!pool->max && q.count_include_pad &&
        ((q.oh - 1) * q.sh + q.kh > q.ih + 2 * q.pt || (q.ow - 1) * q.sw + q.kw > q.iw + 2 * q.pl))
      return nullptr;
  }
  // The input layouts must describe these operands.
  auto fits = [](const LayoutRef& l, int64_t c, int64_t h, int64_t w) {
    return !l || layout_image_dims(*l) == std::array<int64_t, 3>{c, h, w};
  };
  if (!fits(layouts.src, p.c_in, p.ih, p.iw) || (layouts.residual && (!e.residual || !fits(layouts.residual, p.c_out, p.oh, p.ow))))
    return nullptr;
  auto r = std::make_unique<Impl>();
  r->p = p;
  r->e = e;
  r->pooled = pool != nullptr;
  if (pool) r->pool = pool->params;
  r->chunk = pool ? std::clamp<int64_t>(chunk, 1, p.n) : p.n;
  r->src_layout = layouts.src;
  r->residual_layout = e.residual ? layouts.residual : nullptr;
  const int64_t out_c = p.c_out, out_h = pool ? pool->params.oh : p.oh, out_w = pool ? pool->params.ow : p.ow;
  const bool has_bias = bias != nullptr;
  try {
    auto& eng = cpu_engine();
    std::optional<bool> explicit_src;
    auto full_pd = conv_pd_on(p, r->chunk, has_bias, e, layouts.src, explicit_src);
    if (is_ref_impl(full_pd.impl_info_str())) return nullptr;
    r->impl = full_pd.impl_info_str();
    // The weights, reordered once.
    r->weights = packed_copy(memory::desc(conv_weight_dims(p), f32, p.groups == 1 ? tag::oihw : tag::goihw), weight,
                             full_pd.weights_desc());
    if (has_bias) {
      r->bias = Block(static_cast<size_t>(p.c_out) * 4);
      std::memcpy(r->bias.get(), bias, static_cast<size_t>(p.c_out) * 4);
    }
    // Buffers sized for a full chunk serve the remainder too.
    std::optional<dnnl::pooling_forward::primitive_desc> full_pool;
    if (pool && !(full_pool = pool_pd(*pool, r->chunk, full_pd.dst_desc()))) return nullptr;
    // The output's layout: what the last primitive writes, where allowed and usable.
    if (layouts.blocked_dst) {
      LayoutRef l = layout_of(pool ? full_pool->dst_desc() : full_pd.dst_desc());
      if (l && l->image_bytes * p.n <= layouts.dst_capacity) r->dst_layout = std::move(l);
    }
    r->src_image = r->src_layout ? r->src_layout->image_bytes : p.c_in * p.ih * p.iw * 4;
    r->residual_image = r->residual_layout ? r->residual_layout->image_bytes : p.c_out * p.oh * p.ow * 4;
    r->dst_image = r->dst_layout ? r->dst_layout->image_bytes : out_c * out_h * out_w * 4;
    const int64_t rest = p.n % r->chunk;
    for (int64_t n : rest ? std::vector<int64_t>{r->chunk, rest} : std::vector<int64_t>{r->chunk}) {
      auto pd = n == r->chunk ? full_pd : conv_pd_on(p, n, has_bias, e, layouts.src, explicit_src);
      // One weight layout for every chunk length.
      if (pd.weights_desc() != full_pd.weights_desc() || is_ref_impl(pd.impl_info_str())) return nullptr;
      ConvPass pass;
      pass.n = n;
      const memory::desc src_user = images(r->src_layout, n, p.c_in, p.ih, p.iw);
      const memory::desc out_user = images(r->dst_layout, n, out_c, out_h, out_w);
      pass.user_src = memory(src_user, eng, nullptr);
      pass.user_dst = memory(out_user, eng, nullptr);
      // The source, reordered when the primitive wants another layout.
      memory src = pass.user_src;
      if (pd.src_desc() != src_user) {
        if (!r->src_buf.get()) r->src_buf = Block(full_pd.src_desc().get_size());
        src = memory(pd.src_desc(), eng, r->src_buf.get());
        pass.steps.push_back(reorder_step(pass.user_src, src));
      }
      // The conv's destination: the user's buffer when it has the
      // primitive's layout and nothing follows.
      memory conv_dst;
      bool in_user = false;
      if (!pool && pd.dst_desc() == out_user) {
        conv_dst = pass.user_dst;
        in_user = true;
      } else {
        if (!r->conv_buf.get()) r->conv_buf = Block(full_pd.dst_desc().get_size());
        conv_dst = memory(pd.dst_desc(), eng, r->conv_buf.get());
      }
      if (e.residual) {
        const memory::desc res_user = images(r->residual_layout, n, p.c_out, p.oh, p.ow);
        if (in_user && res_user == out_user) {
          pass.residual_in_dst = true;
        } else {
          pass.user_residual = memory(res_user, eng, nullptr);
          pass.steps.push_back(reorder_step(pass.user_residual, conv_dst));
        }
      }
      Step conv{dnnl::convolution_forward(pd),
                {{DNNL_ARG_SRC, src},
                 {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), eng, r->weights.get())},
                 {DNNL_ARG_DST, conv_dst}},
                pd.scratchpad_desc()};
      if (has_bias) conv.args.emplace(DNNL_ARG_BIAS, memory(pd.bias_desc(), eng, r->bias.get()));
      pass.steps.push_back(std::move(conv));
      memory last = conv_dst;
      if (pool) {
        auto ppd = n == r->chunk ? full_pool : pool_pd(*pool, n, pd.dst_desc());
        if (!ppd) return nullptr;
        memory pooled;
        if (ppd->dst_desc() == out_user) {
          pooled = pass.user_dst;
          in_user = true;
        } else {
          if (!r->pool_buf.get()) r->pool_buf = Block(full_pool->dst_desc().get_size());
          pooled = memory(ppd->dst_desc(), eng, r->pool_buf.get());
          in_user = false;
        }
        pass.steps.push_back({dnnl::pooling_forward(*ppd), {{DNNL_ARG_SRC, conv_dst}, {DNNL_ARG_DST, pooled}},
                              ppd->scratchpad_desc()});
        last = pooled;
      }
      if (!in_user) pass.steps.push_back(reorder_step(last, pass.user_dst));
      r->passes.push_back(std::move(pass));
    }
    // Scratchpads last: the steps no longer move.
    std::vector<Step*> steps;
    for (ConvPass& pass : r->passes)
      for (Step& s : pass.steps) steps.push_back(&s);
    r->scratch = give_scratchpads(steps);
  } catch (const dnnl::error&) {
    return nullptr;  // a geometry or post-op oneDNN rejects: the generic kernels handle it
  }
  return std::unique_ptr<PreparedConv>(new PreparedConv(std::move(r)));
}

void PreparedConv::run(const void* src, const void* residual, void* dst) {
  Impl& r = *impl_;
  const ConvParams& p = r.p;
  for (int64_t n0 = 0; n0 < p.n; n0 += r.chunk) {
    ConvPass& pass = r.passes[p.n - n0 >= r.chunk ? 0 : 1];
    auto* s = static_cast<const char*>(src) + n0 * r.src_image;
    auto* d = static_cast<char*>(dst) + n0 * r.dst_image;
    pass.user_src.set_data_handle(const_cast<char*>(s));
    pass.user_dst.set_data_handle(d);
    if (r.e.residual) {
      auto* res = static_cast<const char*>(residual) + n0 * r.residual_image;
      if (pass.residual_in_dst) {
        if (res != d) std::memcpy(d, res, static_cast<size_t>(pass.n * r.residual_image));
      } else {
        pass.user_residual.set_data_handle(const_cast<char*>(res));
      }
    }
    for (const Step& step : pass.steps) step.run();
  }
}

// ---- PreparedMatmul ----

struct PreparedMatmul::Impl {
  Block weights, bias, scratch;
  memory user_a, user_out;
  Step step;
};

PreparedMatmul::PreparedMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedMatmul::~PreparedMatmul() = default;

std::unique_ptr<PreparedMatmul> PreparedMatmul::make(int64_t m, int64_t n, int64_t k, const MatrixRef& b,
                                                     const void* bias, FusedActivation act) {
  if (m <= 0 || n <= 0 || k <= 0) return nullptr;
  auto r = std::make_unique<Impl>();
  try {
    auto& eng = cpu_engine();
    memory::desc a_md({m, k}, f32, tag::ab), w_any({k, n}, f32, tag::any), out_md({m, n}, f32, tag::ab);
    memory::desc bias_md({1, n}, f32, tag::ab);
    Epilogue e;
    e.act = act;
    // b as given (its strides); the primitive reads a copy in the layout it picked.
    auto d = bias ? dnnl::matmul::desc(a_md, w_any, bias_md, out_md) : dnnl::matmul::desc(a_md, w_any, out_md);
    dnnl::matmul::primitive_desc pd(d, attr_with(e), eng);
    if (is_ref_impl(pd.impl_info_str())) return nullptr;
    r->weights = packed_copy(memory::desc({k, n}, f32, memory::dims{b.row_stride, b.col_stride}), b.data,
                             pd.weights_desc());
    r->user_a = memory(a_md, eng, nullptr);
    r->user_out = memory(out_md, eng, nullptr);
    r->step = {dnnl::matmul(pd),
               {{DNNL_ARG_SRC, r->user_a},
                {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), eng, r->weights.get())},
                {DNNL_ARG_DST, r->user_out}},
               pd.scratchpad_desc()};
    if (bias) {
      r->bias = Block(static_cast<size_t>(n) * 4);
      std::memcpy(r->bias.get(), bias, static_cast<size_t>(n) * 4);
      r->step.args.emplace(DNNL_ARG_BIAS, memory(bias_md, eng, r->bias.get()));
    }
    r->scratch = give_scratchpads({&r->step});
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<PreparedMatmul>(new PreparedMatmul(std::move(r)));
}

void PreparedMatmul::run(const void* a, void* out) {
  impl_->user_a.set_data_handle(const_cast<void*>(a));
  impl_->user_out.set_data_handle(out);
  impl_->step.run();
}

}  // namespace ember

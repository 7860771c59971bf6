// The CPU pooling kernels that oneDNN serves: max pooling without indices
// (inference) and average pooling forward/backward, float32, cached by
// geometry; the reference loops (pool_ref.cpp) everywhere else.
#include <algorithm>

#include "ember/core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/nn.h"

namespace ember {
namespace {

using dnnl::memory;
using namespace dnnl_util;

enum class Kind : int64_t { MaxForward, AvgForward, AvgBackward };

using Key = std::array<int64_t, 18>;

Key make_key(Kind kind, const PoolParams& p) {
  return {static_cast<int64_t>(kind), get_num_threads(), p.n, p.c, p.ih, p.iw, p.oh, p.ow, p.kh, p.kw,
          p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, p.count_include_pad, static_cast<int64_t>(p.dtype)};
}

// End padding that makes oneDNN's output size equal p.oh/p.ow (ceil_mode
// windows may hang past the symmetric padding).
int64_t end_pad(int64_t out, int64_t s, int64_t k, int64_t d, int64_t in, int64_t pad) {
  return std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - in - pad, 0);
}

Prim make_prim(Kind kind, const PoolParams& p) {
  Prim r;
  try {
    const auto f32 = memory::data_type::f32;
    using tag = memory::format_tag;
    memory::dims src{p.n, p.c, p.ih, p.iw}, dst{p.n, p.c, p.oh, p.ow};
    memory::desc src_md(src, f32, tag::nchw), dst_md(dst, f32, tag::nchw);
    memory::desc src_any(src, f32, tag::any), dst_any(dst, f32, tag::any);
    memory::dims strides{p.sh, p.sw}, kernel{p.kh, p.kw}, dilation{p.dh - 1, p.dw - 1}, pad_l{p.pt, p.pl};
    memory::dims pad_r{end_pad(p.oh, p.sh, p.kh, p.dh, p.ih, p.pt), end_pad(p.ow, p.sw, p.kw, p.dw, p.iw, p.pl)};
    auto attr = user_scratchpad();
    if (kind == Kind::MaxForward) {
      using fwd = dnnl::pooling_v2_forward;
      // Plain layouts: a pooling pass is memory-bound, a reorder would double it.
      fwd::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src_md, dst_md, strides, kernel,
                  dilation, pad_l, pad_r);
      fwd::primitive_desc pd(d, attr, cpu_engine());
      if (is_ref_impl(pd.impl_info_str())) return r;
      r.prim = fwd(pd);
      r.scratch = pd.scratchpad_desc();
      r.operands.push_back(make_operand(DNNL_ARG_SRC, false, src_md, pd.src_desc()));
      r.operands.push_back(make_operand(DNNL_ARG_DST, true, dst_md, pd.dst_desc()));
    } else {
      auto algo = p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                      : dnnl::algorithm::pooling_avg_exclude_padding;
      using fwd = dnnl::pooling_forward;
      fwd::desc fd(dnnl::prop_kind::forward_training, algo, src_md, dst_md, strides, kernel, pad_l, pad_r);
      fwd::primitive_desc hint(fd, cpu_engine());
      if (kind == Kind::AvgForward) {
        fwd::primitive_desc pd(fd, attr, cpu_engine());
        if (is_ref_impl(pd.impl_info_str())) return r;
        r.prim = fwd(pd);
        r.scratch = pd.scratchpad_desc();
        r.operands.push_back(make_operand(DNNL_ARG_SRC, false, src_md, pd.src_desc()));
        r.operands.push_back(make_operand(DNNL_ARG_DST, true, dst_md, pd.dst_desc()));
      } else {
        using bwd = dnnl::pooling_backward;
        bwd::desc bd(algo, src_md, dst_md, strides, kernel, pad_l, pad_r);
        bwd::primitive_desc pd(bd, attr, cpu_engine(), hint);
        if (is_ref_impl(pd.impl_info_str())) return r;
        r.prim = bwd(pd);
        r.scratch = pd.scratchpad_desc();
        r.operands.push_back(make_operand(DNNL_ARG_DIFF_DST, false, dst_md, pd.diff_dst_desc()));
        r.operands.push_back(make_operand(DNNL_ARG_DIFF_SRC, true, src_md, pd.diff_src_desc()));
      }
    }
    r.ok = true;
  } catch (const dnnl::error&) {
    r.ok = false;
  }
  return r;
}

bool run_dnnl(Kind kind, const PoolParams& p, const void* in, void* out) {
  if (p.dtype != ScalarType::Float32 || p.n * p.c == 0 || p.oh * p.ow == 0) return false;
  static PrimCache<std::tuple_size_v<Key>> cache;
  auto prim = cache.get(make_key(kind, p), [&] { return make_prim(kind, p); });
  if (!prim->ok) return false;
  execute(*prim, {const_cast<void*>(in), out});
  return true;
}

// oneDNN's include-padding divisor counts the extra ceil_mode end padding;
// PyTorch's stops at the symmetric padding, so such shapes take the loop.
bool dnnl_avg_matches(const PoolParams& p) {
  if (!p.count_include_pad) return true;
  return (p.oh - 1) * p.sh + p.kh <= p.ih + 2 * p.pt && (p.ow - 1) * p.sw + p.kw <= p.iw + 2 * p.pl;
}

void max_pool2d_cpu(const PoolParams& p, const void* in, void* out, int64_t* indices) {
  if (!indices && run_dnnl(Kind::MaxForward, p, in, out)) return;
  max_pool2d_ref(p, in, out, indices);
}

void avg_pool2d_cpu(const PoolParams& p, const void* in, void* out) {
  if (dnnl_avg_matches(p) && run_dnnl(Kind::AvgForward, p, in, out)) return;
  avg_pool2d_ref(p, in, out);
}

void avg_pool2d_backward_cpu(const PoolParams& p, const void* grad_out, void* grad_in) {
  if (dnnl_avg_matches(p) && run_dnnl(Kind::AvgBackward, p, grad_out, grad_in)) return;
  avg_pool2d_backward_ref(p, grad_out, grad_in);
}

}  // namespace

EMBER_REGISTER_KERNEL(max_pool2d, CPU, max_pool2d_cpu);
EMBER_REGISTER_KERNEL(avg_pool2d, CPU, avg_pool2d_cpu);
EMBER_REGISTER_KERNEL(avg_pool2d_backward, CPU, avg_pool2d_backward_cpu);

}  // namespace ember

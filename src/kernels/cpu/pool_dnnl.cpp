// The CPU pooling kernel that oneDNN serves: average pooling backward,
// float32, cached by geometry. Note [pooling on oneDNN]: for plain NCHW
// oneDNN 2.6 has only its non-JIT simple_nchw pooling; on W1's pool
// (128x32x28x28, 2x2) its forward took 47 ms (max) and 26 ms (avg) against
// 24 and 11 ms for pool_ref.cpp's loops, while its avg backward was ~15%
// faster. So forwards run the loops, and only the avg backward runs here.
#include <algorithm>

#include "ember/core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/nn.h"

namespace ember {
namespace {

using dnnl::memory;
using namespace dnnl_util;

enum class Kind : int64_t { AvgBackward };

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

Prim make_prim(const PoolParams& p) {
  Prim r;
  try {
    const auto f32 = memory::data_type::f32;
    using tag = memory::format_tag;
    memory::desc src_md({p.n, p.c, p.ih, p.iw}, f32, tag::nchw), dst_md({p.n, p.c, p.oh, p.ow}, f32, tag::nchw);
    memory::dims strides{p.sh, p.sw}, kernel{p.kh, p.kw}, pad_l{p.pt, p.pl};
    memory::dims pad_r{end_pad(p.oh, p.sh, p.kh, p.dh, p.ih, p.pt), end_pad(p.ow, p.sw, p.kw, p.dw, p.iw, p.pl)};
    auto algo = p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                    : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_forward::desc fd(dnnl::prop_kind::forward_training, algo, src_md, dst_md, strides, kernel, pad_l,
                                   pad_r);
    dnnl::pooling_forward::primitive_desc hint(fd, cpu_engine());
    dnnl::pooling_backward::desc bd(algo, src_md, dst_md, strides, kernel, pad_l, pad_r);
    dnnl::pooling_backward::primitive_desc pd(bd, user_scratchpad(), cpu_engine(), hint);
    if (is_ref_impl(pd.impl_info_str())) return r;
    r.prim = dnnl::pooling_backward(pd);
    r.scratch = pd.scratchpad_desc();
    r.operands.push_back(make_operand(DNNL_ARG_DIFF_DST, false, dst_md, pd.diff_dst_desc()));
    r.operands.push_back(make_operand(DNNL_ARG_DIFF_SRC, true, src_md, pd.diff_src_desc()));
    r.ok = true;
  } catch (const dnnl::error&) {
    r.ok = false;
  }
  return r;
}

bool run_dnnl(Kind kind, const PoolParams& p, const void* in, void* out) {
  if (p.dtype != ScalarType::Float32 || p.n * p.c == 0 || p.oh * p.ow == 0) return false;
  static PrimCache<std::tuple_size_v<Key>> cache;
  auto prim = cache.get(make_key(kind, p), [&] { return make_prim(p); });
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

void avg_pool2d_backward_cpu(const PoolParams& p, const void* grad_out, void* grad_in) {
  if (dnnl_avg_matches(p) && run_dnnl(Kind::AvgBackward, p, grad_out, grad_in)) return;
  avg_pool2d_backward_ref(p, grad_out, grad_in);
}

}  // namespace

EMBER_REGISTER_KERNEL(avg_pool2d_backward, CPU, avg_pool2d_backward_cpu);

}  // namespace ember

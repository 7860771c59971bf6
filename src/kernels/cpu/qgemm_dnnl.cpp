// The int8 GEMM through oneDNN's matmul primitive (u8 x s8 -> s32), cached
// by geometry (Note [dnnl primitive cache]).
#include <oneapi/dnnl/dnnl.hpp>

#include "ember/core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/qgemm.h"

namespace ember {
namespace {

using dnnl::memory;
using dnnl_util::Prim;

Prim make_prim(const QGemmArgs& g) {
  Prim p;
  memory::desc a({g.m, g.k}, memory::data_type::u8, {g.lda, 1});
  memory::desc b({g.k, g.n}, memory::data_type::s8, {1, g.ldb});  // B^T read in place
  memory::desc c({g.m, g.n}, memory::data_type::s32, {g.ldc, 1});
  try {
    dnnl::matmul::desc d(a, b, c);
    dnnl::matmul::primitive_desc pd(d, dnnl_util::user_scratchpad(), dnnl_util::cpu_engine());
    if (dnnl_util::is_ref_impl(pd.impl_info_str())) return p;
    p.prim = dnnl::matmul(pd);
    p.scratch = pd.scratchpad_desc();
    p.operands = {dnnl_util::make_operand(DNNL_ARG_SRC, false, a, pd.src_desc()),
                  dnnl_util::make_operand(DNNL_ARG_WEIGHTS, false, b, pd.weights_desc()),
                  dnnl_util::make_operand(DNNL_ARG_DST, true, c, pd.dst_desc())};
    p.ok = true;
  } catch (const dnnl::error&) {
    p.ok = false;
  }
  return p;
}

}  // namespace

bool qgemm_u8s8s32_dnnl(const QGemmArgs& g) {
  static dnnl_util::PrimCache<7> cache;
  auto p = cache.get({g.m, g.n, g.k, g.lda, g.ldb, g.ldc, get_num_threads()}, [&] { return make_prim(g); });
  if (!p->ok) return false;
  dnnl_util::execute(*p, {const_cast<uint8_t*>(g.a), const_cast<int8_t*>(g.b), g.c});
  return true;
}

void qgemm_u8s8s32(const QGemmArgs& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = 0;
    return;
  }
  if (!qgemm_u8s8s32_dnnl(g)) qgemm_u8s8s32_ref(g);
}

bool cpu_has_vnni() {
  static const bool has = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 ||
           isa == dnnl::cpu_isa::avx512_core_amx || isa == dnnl::cpu_isa::avx2_vnni;
  }();
  return has;
}

}  // namespace ember

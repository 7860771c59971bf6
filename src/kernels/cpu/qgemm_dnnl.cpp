// The int8 GEMM through oneDNN's matmul primitive (u8 x s8 -> s32), cached
// by geometry (Note [dnnl primitive cache]).
#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <memory>

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
  using Key = std::array<int64_t, 7>;
  static dnnl_util::PrimCache<7> cache;
  // A thread's recent geometries with their dnnl::memory objects, so a
  // repeated shape (an LSTM's step) rebinds pointers instead of building the
  // memory objects and the argument map again (as matmul_dnnl.cpp's slots).
  struct Slot {
    Key key{};
    std::shared_ptr<const Prim> prim;
    dnnl::memory a, b, c;
  };
  thread_local std::array<Slot, 8> slots;
  const Key key{g.m, g.n, g.k, g.lda, g.ldb, g.ldc, get_num_threads()};
  Slot& s = slots[dnnl_util::KeyHash<7>()(key) % slots.size()];
  void* a = const_cast<uint8_t*>(g.a);
  void* b = const_cast<int8_t*>(g.b);
  if (!s.prim || s.key != key) {
    s.prim = cache.get(key, [&] { return make_prim(g); });
    s.key = key;
    if (!s.prim->ok) return false;
    auto& eng = dnnl_util::cpu_engine();
    const auto& ops = s.prim->operands;
    s.a = dnnl::memory(ops[0].prim, eng, a);
    s.b = dnnl::memory(ops[1].prim, eng, b);
    s.c = dnnl::memory(ops[2].prim, eng, g.c);
  } else {
    if (!s.prim->ok) return false;
    s.a.set_data_handle(a);
    s.b.set_data_handle(b);
    s.c.set_data_handle(g.c);
  }
  const Prim& p = *s.prim;
  for (const dnnl_util::Operand& o : p.operands)
    if (o.needs_reorder()) {  // not with the plain layouts make_prim asks for; kept correct anyway
      dnnl_util::execute(p, {a, b, g.c});
      return true;
    }
  dnnl_util::Buffer scratch_buf(p.scratch.get_size());
  dnnl::memory scratch = scratch_buf.get() ? dnnl::memory(p.scratch, dnnl_util::cpu_engine(), scratch_buf.get())
                                           : dnnl::memory();
  std::array<dnnl_exec_arg_t, 4> args;
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, s.a.get()};
  args[n++] = {DNNL_ARG_WEIGHTS, s.b.get()};
  args[n++] = {DNNL_ARG_DST, s.c.get()};
  if (scratch_buf.get()) args[n++] = {DNNL_ARG_SCRATCHPAD, scratch.get()};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.prim.get(), dnnl_util::cpu_stream().get(), n, args.data()),
                          "qgemm: oneDNN execution failed");
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

bool qgemm_exact(bool reduce_range) { return reduce_range || cpu_has_vnni(); }

}  // namespace ember

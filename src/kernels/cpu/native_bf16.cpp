#include "kernels/native_bf16.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace ember {

// Asked once: oneDNN fixes its ISA at the first query. AVX512_BF16 gives
// vdpbf16ps (two bf16 products per float32 lane), AMX its tile multiply;
// avx2_vnni and plain AVX-512 convert bf16 to float32 and gain nothing.
bool cpu_has_native_bf16() {
  static const bool has = [] {
    dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

}  // namespace ember

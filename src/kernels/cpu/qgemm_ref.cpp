// The reference int8 GEMM: the oracle of qgemm_dnnl.cpp.
#include "kernels/qgemm.h"

namespace ember {

void qgemm_u8s8s32_ref(const QGemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      int32_t acc = 0;
      const uint8_t* a = g.a + i * g.lda;
      const int8_t* b = g.b + j * g.ldb;
      for (int64_t k = 0; k < g.k; ++k) acc += static_cast<int32_t>(a[k]) * static_cast<int32_t>(b[k]);
      g.c[i * g.ldc + j] = acc;
    }
}

}  // namespace ember

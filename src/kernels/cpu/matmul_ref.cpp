// The reference GEMM: a plain blocked loop for any strides and every numeric
// dtype. Production path for float64 and integers; the oracle for oneDNN.
#include <algorithm>
#include <array>
#include <type_traits>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/linalg.h"

namespace ember {
namespace {

// Integers accumulate in uint64: wrap-around is then defined and, modulo
// 2^bits, equal to what a narrower accumulator would give (C++20 makes the
// final narrowing conversion modular too).
template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t,
                                 std::conditional_t<std::is_same_v<T, double>, double, float>>;

template <typename T>
acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return static_cast<acc_t<T>>(v);
}

template <typename T>
acc_t<T> scalar_acc(const Scalar& s) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(s.to_long());
  else return static_cast<acc_t<T>>(s.to_double());
}

// Rows of c are computed kRows at a time over column blocks of kCols, so each
// loaded row of b is reused kRows times while the accumulators stay in L1.
constexpr int64_t kRows = 4;
constexpr int64_t kCols = 256;

template <typename T>
void gemm_ref(const GemmArgs& g) {
  using Acc = acc_t<T>;
  const T* A = static_cast<const T*>(g.a.data);
  const T* B = static_cast<const T*>(g.b.data);
  T* C = static_cast<T*>(g.c.data);
  const T* bias = static_cast<const T*>(g.bias);
  const Acc alpha = scalar_acc<T>(g.alpha), beta = scalar_acc<T>(g.beta);
  const bool use_beta = beta != Acc(0);
  const int64_t row_tiles = (g.m + kRows - 1) / kRows;
  const int64_t work_per_tile = std::max<int64_t>(1, kRows * g.n * std::max<int64_t>(g.k, 1));
  parallel_for(0, g.batch * row_tiles, std::max<int64_t>(1, kGrainSize / work_per_tile),
               [&](int64_t t0, int64_t t1) {
    std::array<std::array<Acc, kCols>, kRows> acc;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bi = t / row_tiles, i0 = (t % row_tiles) * kRows;
      const int64_t rows = std::min(kRows, g.m - i0);
      const T* a0 = A + bi * g.a.batch_stride + i0 * g.a.row_stride;
      const T* b0 = B + bi * g.b.batch_stride;
      T* c0 = C + bi * g.c.batch_stride + i0 * g.c.row_stride;
      for (int64_t j0 = 0; j0 < g.n; j0 += kCols) {
        const int64_t cols = std::min(kCols, g.n - j0);
        for (int64_t r = 0; r < rows; ++r) std::fill_n(acc[r].begin(), cols, Acc(0));
        for (int64_t p = 0; p < g.k; ++p) {
          const T* brow = b0 + p * g.b.row_stride + j0 * g.b.col_stride;
          for (int64_t r = 0; r < rows; ++r) {
            const Acc av = to_acc(a0[r * g.a.row_stride + p * g.a.col_stride]);
            for (int64_t j = 0; j < cols; ++j) acc[r][j] += av * to_acc(brow[j * g.b.col_stride]);
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          T* crow = c0 + r * g.c.row_stride + j0 * g.c.col_stride;
          for (int64_t j = 0; j < cols; ++j) {
            Acc v = acc[r][j];
            if (bias) v += to_acc(bias[(j0 + j) * g.bias_stride]);
            v *= alpha;
            if (use_beta) v += beta * to_acc(crow[j * g.c.col_stride]);
            crow[j * g.c.col_stride] = static_cast<T>(v);
          }
        }
      }
    }
  });
}

}  // namespace

void matmul_ref(const GemmArgs& args) {
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  dispatch_numeric(args.dtype, "matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemm_ref<T>(args);
  });
}

}  // namespace ember

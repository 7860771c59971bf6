// int8 GEMM for quantized linear layers: C[m, n] (int32) = sum_k A[m, k]
// (uint8) * B[n, k] (int8), row-major with leading dimensions. B is a
// Linear's [out, in] weight as stored. The reference loop is the oracle of
// the oneDNN kernel (exact integers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace ember {

// The largest k whose int32 sums cannot overflow: 255 * 128 * k < 2^31.
constexpr int64_t kQGemmMaxK = 65536;

struct QGemmArgs {
  const uint8_t* a = nullptr;
  int64_t lda = 0;
  const int8_t* b = nullptr;
  int64_t ldb = 0;
  int32_t* c = nullptr;
  int64_t ldc = 0;
  int64_t m = 0, n = 0, k = 0;
};

// The plain triple loop with int32 accumulation.
void qgemm_u8s8s32_ref(const QGemmArgs& g);
// oneDNN's int8 matmul (VNNI / AMX / AVX2 as the CPU has); false when oneDNN
// offers only a reference implementation for this shape.
bool qgemm_u8s8s32_dnnl(const QGemmArgs& g);
// oneDNN where it has a fast kernel, else the reference loop.
void qgemm_u8s8s32(const QGemmArgs& g);

// Whether the CPU multiplies uint8 by int8 without an int16 intermediate
// (AVX-512 VNNI, AVX-VNNI, AMX). Without it (AVX2's vpmaddubsw) a pair of
// products can saturate, so quantized activations keep 7 bits (PyTorch's
// reduce_range).
bool cpu_has_vnni();

}  // namespace ember

namespace ember {

// Note [dynamic int8 linear]
// y[m, n] = float(acc[m, n] - zx * colsum[n]) * (sx * w_scale[n]) + bias[n],
// acc = qx @ w^T in int32, where qx = quantize(x, sx, zx) as uint8 with
// (sx, zx) chosen per call from min(x) and max(x) (choose_qparams, range
// [0, 255], or [0, 127] with reduce_range), and w is int8 per output channel
// with zero point 0 (so colsum[n] = sum_k w[n, k] folds zx out of the
// product). The epilogue is PyTorch's fbgemm ReQuantizeForFloat.
struct QLinearDynamicArgs {
  const float* x = nullptr;  // [m, k] row-major
  int64_t m = 0, k = 0, n = 0;
  const int8_t* w = nullptr;         // [n, k]
  const int32_t* colsum = nullptr;   // [n]
  const float* w_scale = nullptr;    // [n]
  const float* bias = nullptr;       // [n] or null
  bool reduce_range = false;
  bool relu = false;   // y = max(0, y), the graph's fused activation
  float* y = nullptr;  // [m, n]
};
// q[i] = clamp(round_half_even(x[i] * inv_scale) + zero_point, 0, qmax), NaN
// to 0 (the product in float32, as PyTorch's quantize_val); Highway, dispatched.
void quantize_u8(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero_point, float qmax);
// q[i] = clamp(round_half_even(x[i] * inv_scale), -127, 127), NaN to 0.
void quantize_s8(const float* x, int8_t* q, int64_t n, float inv_scale);
// The smallest and largest number in x[0, n) (NaN left out; 0 and 0 when
// there are none): the range a dynamic activation is quantized over.
struct QRange {
  float lo = 0, hi = 0;
};
QRange qrange_f32(const float* x, int64_t n);
// Two blocks' ranges as one.
inline QRange pooled(QRange a, QRange b) { return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi}; }
// The per-call terms of Note [dynamic int8 linear] once the activation's
// range is known: how to quantize it (quantize_u8's arguments) and, per
// output column j < n, offset[j] = zx * colsum[j] (wrapping) and scale[j] =
// sx * w_scale[j] (dequantize_row's arguments).
struct QActivationTerms {
  float inv_scale = 1, zero_point = 0, qmax = 255;
};
QActivationTerms dynamic_terms(QRange range, bool reduce_range, const int32_t* colsum, const float* w_scale, int64_t n,
                               uint32_t* offset, float* scale);
// Whether oneDNN's int8 product gives exact integers for these activations:
// without VNNI its u8 x s8 products may saturate in int16 pairs unless the
// activations keep 7 bits (reduce_range); the reference loop runs otherwise.
bool qgemm_exact(bool reduce_range);
// reference = true: the int8 product through qgemm_u8s8s32_ref.
void qlinear_dynamic_f32(const QLinearDynamicArgs& a, bool reference = false);
// y[j] = float(int32(acc[j] - offset[j])) * scale[j] + bias[j] (bias may be
// null), the subtraction wrapping, the rest one fused multiply-add, then
// max(0, y[j]) when relu; Highway.
void dequantize_row(const int32_t* acc, const uint32_t* offset, const float* scale, const float* bias, float* y,
                    int64_t n, bool relu);
// The same with the int8 product supplied for rows [row, row + rows):
// acc [rows, n] (int32) = qx [rows, k] (uint8) x a.w^T, both pointing at the
// block's first row. Once the range is known, blocks of rows are quantized,
// multiplied and dequantized by both threads at once (Note [dynamic int8
// rows]), so gemm is called from inside a parallel region with disjoint rows.
using QGemmFn = std::function<void(const uint8_t* qx, int32_t* acc, int64_t row, int64_t rows)>;
void qlinear_dynamic_f32_with(const QLinearDynamicArgs& a, const QGemmFn& gemm);
// The row blocks qlinear_dynamic_f32_with uses for m rows on `threads` threads, as [begin, end) pairs.
std::vector<std::pair<int64_t, int64_t>> qlinear_dynamic_row_blocks(int64_t m, int64_t k, int64_t n, int threads);

// The int8 product of one geometry, c [m, n] = a [m, k] x w^T, on a oneDNN
// matmul made once with w [n, k] reordered once into its blocked layout:
// small products (an LSTM step's) spend most of qgemm_u8s8s32's time
// repacking the plain weights. Exact int32, so qgemm_u8s8s32's numbers.
// nullptr where oneDNN has no JIT kernel. Made for one thread (run it inside
// a parallel region, or under a one-thread limit); not thread-safe.
class PackedQGemm {
 public:
  ~PackedQGemm();
  static std::unique_ptr<PackedQGemm> make(int64_t m, int64_t n, int64_t k, const int8_t* w);
  void run(const uint8_t* a, int32_t* c);
  size_t bytes() const;  // what it holds: the packed weights and its scratchpad

 private:
  struct Impl;
  explicit PackedQGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The products made for one int8 weight w [n, k] (a quant::PackedLinear's),
// kept between calls, since making one costs 10-15 us (the Xeon), as much as
// a short sequence's steps. take() hands out a product for m rows (made on
// first use; nullptr where oneDNN has no JIT kernel) and give() returns it;
// at most 16, or 32 MiB, are kept (the last two whatever their size).
// Thread-safe; each product is used by one thread at a time.
class PackedQGemmPool {
 public:
  PackedQGemmPool();
  ~PackedQGemmPool();
  std::unique_ptr<PackedQGemm> take(int64_t m, int64_t n, int64_t k, const int8_t* w);
  void give(int64_t m, std::unique_ptr<PackedQGemm> p);
  size_t kept() const;        // products held now
  size_t bytes_kept() const;  // what they hold

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// qlinear_dynamic_f32 for one geometry and constant weights (the runtime's
// prepared form): the int8 product runs on a oneDNN matmul made once, with
// the weights reordered once into its blocked layout (the plain kernel reads
// them as stored). Products are exact int32, so the results are
// qlinear_dynamic_f32's bitwise. nullptr where oneDNN has no JIT kernel or
// the CPU lacks VNNI for full-range activations. Not thread-safe.
class PreparedQLinearDynamic {
 public:
  ~PreparedQLinearDynamic();
  // w [n, k] int8 (copied into the packed layout).
  static std::unique_ptr<PreparedQLinearDynamic> make(int64_t m, int64_t n, int64_t k, const int8_t* w,
                                                      bool reduce_range);
  // a's m, k, n and reduce_range must be those of make; a.w is read only when the thread count changed since make.
  void run(const QLinearDynamicArgs& a);

 private:
  struct Impl;
  explicit PreparedQLinearDynamic(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember

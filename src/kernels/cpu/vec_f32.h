// Highway SIMD loops for contiguous float32, dispatched at run time to the
// best ISA the CPU has (SSE4, AVX2, AVX-512).
#pragma once

#include <cstdint>

namespace ember::vec {

enum class Binary : int { Add, Sub, Mul, Div };
// mode: 0 = both contiguous, 1 = b is one scalar, 2 = a is one scalar.
void binary_f32(Binary op, const float* a, const float* b, float* out, int64_t n, int mode);

enum class Unary : int {
  Exp, Expm1, Log, Log1p, Tanh, Sigmoid, Sqrt, Rsqrt, Relu, Neg, Abs,
  Sin, Cos, Silu, GeluTanh, Reciprocal, Floor, Ceil, Round, Trunc,
  Gelu  // erf by Abramowitz and Stegun 7.1.26, as PyTorch's vectorized GELU
};
void unary_f32(Unary op, const float* x, float* out, int64_t n);

// Reductions over n contiguous floats.
float sum_f32(const float* x, int64_t n);
float max_f32(const float* x, int64_t n);  // NaN if any element is NaN
float min_f32(const float* x, int64_t n);
// Both in one pass; NaN in both if any element is NaN.
void minmax_f32(const float* x, int64_t n, float* lo, float* hi);
// out[j] += x[j] for j < n (column accumulation for outer reductions).
void accumulate_f32(float* out, const float* x, int64_t n);

// One LSTM step for inference (PyTorch's gate order i, f, g, o): gx and gh
// [batch, 4 * hidden] are the input and hidden projections, c [batch,
// hidden] the cell state; writes h_out and c_out [batch, hidden]. The numbers
// of add, sigmoid, tanh and mul run as separate ops, in one pass.
void lstm_cell_f32(const float* gx, const float* gh, const float* c, float* h_out, float* c_out, int64_t batch,
                   int64_t hidden);

// out = g * GELU'(x), exact (erf as Unary::Gelu's) or with the tanh
// approximation: the backward of both in one pass.
void gelu_backward_f32(const float* g, const float* x, float* out, int64_t n, bool tanh_approx);

// Name of the ISA the dispatcher picked, for benchmarks and env.json.
const char* target_name();

}  // namespace ember::vec

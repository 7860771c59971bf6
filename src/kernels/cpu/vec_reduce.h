// Highway SIMD helpers for reductions and softmax over contiguous float32,
// dispatched at run time like vec_f32.h.
#pragma once

#include <cstdint>

namespace ember::vec {

// out[i] = exp(x[i] - shift) for i < n; returns the sum of the out values.
// out may equal x.
float exp_sum_f32(const float* x, float shift, float* out, int64_t n);

// Sum of n contiguous floats, accumulated in float SIMD lanes per block of
// 4096 and in double across blocks, so long rows keep their precision.
double sum_f32_precise(const float* x, int64_t n);

}  // namespace ember::vec

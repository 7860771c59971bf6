// Philox4x32-10 over runs of consecutive counters, in SIMD (Highway,
// dispatched at run time). Each block equals ember::philox4x32(key, counter):
// the vector code is an exact copy of the scalar generator, several counters
// per register, so the random streams do not change.
#pragma once

#include <cstdint>

namespace ember::vec {

// For i < n, with (r0, r1, r2, r3) = philox4x32(key, counter0 + i):
// words01[i] = r0 << 32 | r1 and, when words23 is not null,
// words23[i] = r2 << 32 | r3.
void philox_bits(uint64_t key, uint64_t counter0, int64_t n, uint64_t* words01, uint64_t* words23);

// Dropout's mask and product in one pass: element i is kept when
// (words01 of counter0 + i) >> 11 < keep_below, that is when its uniform
// double in [0, 1) is below keep_below / 2^53; then noise[i] = scale and
// y[i] = x[i] * scale, otherwise both are 0.
void dropout_f32(uint64_t key, uint64_t counter0, uint64_t keep_below, float scale, const float* x, float* y,
                 float* noise, int64_t n);

}  // namespace ember::vec

// Note [flat float loops]: add, sub, mul and div of two same-shaped,
// contiguous float32 CPU tensors with few elements skip the TensorIter (its
// setup, the dtype dispatch and the loop callback): for a one-element tensor
// those cost more than the arithmetic, and a chain of small ops (W3, an RNN
// step's gate math) is nothing else. Bigger tensors keep the iterator, which
// splits them across threads.
#pragma once

#include <cstdint>

#include "core/op_registry.h"

namespace ember {

// Up to this many elements a flat loop runs on the calling thread.
constexpr int64_t kFlatLoopMaxNumel = 4096;

using FlatBinaryF32 = void(const float* a, const float* b, float* out, int64_t n);
// The op's flat loop, or null when it has none (defined with the CPU kernels).
FlatBinaryF32* flat_binary_f32(Op op);

}  // namespace ember

// The separable-window pooling composites of pool_nd.cpp (Note [separable
// pooling]), shared with pool.cpp's avg_pool2d for the inputs its kernel
// does not take.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

// avg_pool over the last nd dims of an (N, C, *) or (C, *) input; op names
// the caller in errors. Floating-point or int64 input.
Tensor avg_pool_nd(const char* op, const Tensor& input, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride,
                   IntArrayRef padding, bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor);

}  // namespace ember

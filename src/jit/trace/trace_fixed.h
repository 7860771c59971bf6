// One trace at the example sizes (src/jit/tracer.cpp); jit::trace
// (src/jit/dynamic.cpp) calls it once, or once per probe size for dynamic dims.
// Also the input resizing that the probes and verify_export's cases share.
#pragma once

#include "ember/jit/trace.h"

namespace ember::jit {

Graph trace_fixed(nn::Module& module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
                  const TraceOptions& options);

// The size n along `dim`: x cut to its first n, or repeated (wrapping round) to n.
Tensor resize_dim(const Tensor& x, int64_t dim, int64_t n);

}  // namespace ember::jit

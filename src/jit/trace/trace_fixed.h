// One trace at the example sizes (src/jit/tracer.cpp); jit::trace
// (src/jit/dynamic.cpp) calls it once, or once per probe size for dynamic dims.
#pragma once

#include "ember/jit/trace.h"

namespace ember::jit {

Graph trace_fixed(nn::Module& module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
                  const TraceOptions& options);

}  // namespace ember::jit

// jit::trace: runs a module once (eval mode, no grad) under the trace hook and
// returns what it computed as a jit::Graph.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/jit/graph.h"
#include "ember/nn/module.h"

namespace ember::jit {

// A read of traced tensor values on the host (item(), to_vector()...), an op
// the graph cannot represent (random numbers, nonzero), or an in-place write
// the tracer cannot follow. The message names the op, the module where known,
// and the fix.
class TracingError : public Error {
 public:
  using Error::Error;
};

// Input `input`'s dim `dim` may vary at run time under the name `name`
// ("batch", "seq"); the same name on several inputs means the same size.
struct DynamicDim {
  size_t input = 0;
  int64_t dim = 0;
  std::string name;
};

struct TraceOptions {
  // Dims that stay symbolic in the graph (Note [dynamic dims] in src/jit/dynamic.cpp).
  std::vector<DynamicDim> dynamic_dims;
  // false: a host read of a traced value becomes a warning (the value read is
  // baked into the graph as a constant), like PyTorch's TracerWarning.
  bool strict = true;
  std::vector<std::string> input_names;   // default "input0", "input1", ...
  std::vector<std::string> output_names;  // default "output0", ...
  // Receives the warnings of strict=false; default: printed to stderr.
  std::function<void(const std::string&)> warn;
};

using TraceFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// Traces fn(inputs); `module` names the parameters and buffers fn reads and is
// switched to eval mode for the trace (its mode is restored afterwards).
Graph trace(nn::Module& module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
            const TraceOptions& options = {});
// module.forward(example_inputs[0]) (one input).
Graph trace(nn::Module& module, const std::vector<Tensor>& example_inputs, const TraceOptions& options = {});

}  // namespace ember::jit

// jit::verify: does a graph compute what the eager module does?
#pragma once

#include <string>
#include <vector>

#include "ember/jit/graph.h"
#include "ember/jit/trace.h"

namespace ember::jit {

// rtol = atol = 0 asks for bitwise equality (the graph before passes).
struct Tolerance {
  double rtol = 0, atol = 0;
};

struct OutputDiff {
  std::string name;
  double max_abs = 0, max_rel = 0;  // over all elements; rel = |a - b| / |eager|, where eager != 0
  bool bitwise_equal = false;
  bool ok = false;  // within tolerance (bitwise when the tolerance is 0)
  std::string problem;  // a shape or dtype mismatch, when there is one
};

struct VerifyResult {
  std::vector<OutputDiff> outputs;
  bool ok = false;
  // One line per output: "output0: max abs 0 rel 0 (bitwise equal)".
  std::string str() const;
};

// Runs fn (eager, eval mode, no grad) and the graph on `inputs` and compares.
VerifyResult verify(nn::Module& module, const TraceFn& fn, const Graph& graph, const std::vector<Tensor>& inputs,
                    Tolerance tol = {});
// module.forward(inputs[0]).
VerifyResult verify(nn::Module& module, const Graph& graph, const std::vector<Tensor>& inputs, Tolerance tol = {});

}  // namespace ember::jit

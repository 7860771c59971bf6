// jit::verify: does a graph compute what the eager module does? verify_export
// asks it beyond the example: at other sizes of the dynamic dims and on random
// inputs shaped like the example.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/jit/graph.h"
#include "ember/jit/trace.h"

namespace ember::jit {

// rtol = atol = 0 asks for bitwise equality (the graph before passes); else
// every element within atol + rtol * (the output's largest magnitude), Note
// [verify tolerance] in src/jit/trace/verify.cpp.
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

struct VerifyOptions {
  Tolerance tol;
  // One case per symbol of the graph's inputs ("batch", "seq") at another size.
  bool other_sizes = true;
  // One case of random inputs shaped like the example (Note [verify cases]).
  bool random = true;
  uint64_t seed = 0;  // of the random inputs (a generator of its own: the default one is left alone)
  // More named input sets, checked after the others (real data besides the example).
  std::vector<std::pair<std::string, std::vector<Tensor>>> extra_cases;
};

struct VerifyCase {
  std::string name;  // "example", "batch=35", "random"
  std::vector<std::vector<int64_t>> input_sizes;
  VerifyResult result;
  std::string error;  // eager or the graph threw (the message); result is then empty
  bool ok() const { return error.empty() && result.ok; }
};

struct VerifyReport {
  std::vector<VerifyCase> cases;
  bool ok = false;
  // One line per case and output:
  // "example [32, 1, 28, 28]: output: max abs diff 0, max rel diff 0 (bitwise equal)".
  std::string str() const;
};

// verify() on the example inputs, then on the cases of `options`; a case where
// eager or the graph throws fails with the message instead of throwing.
VerifyReport verify_export(nn::Module& module, const TraceFn& fn, const Graph& graph,
                           const std::vector<Tensor>& example_inputs, const VerifyOptions& options = {});
// module.forward(example_inputs[0]).
VerifyReport verify_export(nn::Module& module, const Graph& graph, const std::vector<Tensor>& example_inputs,
                           const VerifyOptions& options = {});

// The inputs of the cases beyond the example (exposed for tests): per symbol
// of the graph's inputs, the examples cut or repeated to another size along
// every dim that is that symbol; random inputs like the examples.
std::vector<std::pair<std::string, std::vector<Tensor>>> other_size_inputs(const Graph& graph,
                                                                           const std::vector<Tensor>& examples);
std::vector<Tensor> random_inputs_like(const std::vector<Tensor>& examples, uint64_t seed);

}  // namespace ember::jit

// runtime::Session: loads a .ember model and runs it (issue 14's runtime).
// Part of libember_runtime.so (core, kernels, ops, io and the graph only) and
// of libember. run() is const and keeps no state between calls, so several
// threads may call it on one session at once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/jit/model_file.h"

namespace ember::runtime {

struct SessionOptions {
  int threads = 0;  // > 0: set Ember's (process-wide) thread count
};

using NamedTensors = std::map<std::string, Tensor>;

class Session {
 public:
  // Throws naming the file and the problem (see jit::load_model).
  explicit Session(const std::string& path, SessionOptions options = {});
  explicit Session(jit::ModelFile model, SessionOptions options = {});

  // Inputs by name; every graph input must be given, no other. Validated
  // against the signature (dtype, rank, fixed sizes, symbolic dims agreeing).
  NamedTensors run(const NamedTensors& inputs) const;
  // Inputs in signature order; outputs in signature order.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  const jit::ModelFile& model() const { return model_; }

 private:
  jit::ModelFile model_;
};

}  // namespace ember::runtime

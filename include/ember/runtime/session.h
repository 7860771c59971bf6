// runtime::Session: loads a .ember model (or an .onnx one, run by
// runtime::OnnxModel) and runs it (issue 14's runtime).
// Part of libember_runtime.so (core, kernels, ops, io and the graph only) and
// of libember. run() is const and safe to call from several threads on one
// session at once: each call borrows a jit::PreparedGraph for its input sizes
// from the session's pool (built on first use, one per concurrent caller), so
// a steady-state run allocates nothing for the model's intermediates.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/jit/model_file.h"

namespace ember::runtime {

class OnnxModel;

struct SessionOptions {
  int threads = 0;  // > 0: set Ember's (process-wide) thread count
};

using NamedTensors = std::map<std::string, Tensor>;

class Session {
 public:
  // Throws naming the file and the problem (see jit::load_model, OnnxModel::load).
  // A path ending in .onnx is loaded as an ONNX model.
  explicit Session(const std::string& path, SessionOptions options = {});
  explicit Session(jit::ModelFile model, SessionOptions options = {});

  // Inputs by name; every graph input must be given, no other. Validated
  // against the signature (dtype, rank, fixed sizes, symbolic dims agreeing).
  NamedTensors run(const NamedTensors& inputs) const;
  // Inputs in signature order; outputs in signature order.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // For an ONNX model: its signature (inputs and outputs; no nodes).
  const jit::ModelFile& model() const { return model_; }
  // The ONNX model, or nullptr for a .ember one.
  const OnnxModel* onnx() const { return onnx_.get(); }

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

 private:
  struct Pool;
  jit::ModelFile model_;
  std::shared_ptr<const OnnxModel> onnx_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace ember::runtime

// An ONNX model run by Ember's ops (issue 16): the operator set
// torch.onnx.export (PyTorch 1.13, opsets 13-17) emits for MLPs, CNNs with
// BatchNorm and pooling, ResNets, LSTM/GRU and transformer encoders.
// runtime::Session loads .onnx files through it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/jit/model_file.h"

namespace ember::runtime {

class OnnxModel {
 public:
  // Throws naming the file and what is wrong: not an ONNX model (bad
  // protobuf), unsupported ops (all of them, with counts), a missing or
  // mis-sized initializer, an input used before it is defined. Every
  // allocation is bounded by the file's size.
  static OnnxModel load(const std::string& path);
  static OnnxModel parse(std::string_view bytes, const std::string& source);

  // Inputs in signature order (checked against it); throws naming the file
  // and the node when a node fails (wrong shapes, bad attributes).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  // The signature as a jit::ModelFile: a graph with the inputs and outputs
  // only (dim_params become symbolic dims), producer "onnx: <producer>",
  // source {format, opset, ir_version, file} plus the file's metadata_props.
  const jit::ModelFile& signature() const;
  // ONNX op types with their counts, sorted by op type.
  std::vector<std::pair<std::string, int64_t>> op_counts() const;
  int64_t parameter_count() const;

  OnnxModel(OnnxModel&&) noexcept;
  OnnxModel& operator=(OnnxModel&&) noexcept;
  ~OnnxModel();

 private:
  struct Impl;
  OnnxModel();
  std::unique_ptr<Impl> impl_;
};

// Whether `path` names an ONNX file (by its .onnx extension).
bool is_onnx_path(const std::string& path);

}  // namespace ember::runtime

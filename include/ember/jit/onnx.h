// ONNX interop (issue 16): a jit::Graph written as an ONNX model through
// ONNX's own protobuf classes (Debian's libonnx-dev), checked by ONNX's
// checker and shape inference before it is written.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ember/jit/graph.h"

namespace ember::jit {

constexpr int kOnnxDefaultOpset = 17;
constexpr int kOnnxMinOpset = 13;
constexpr int kOnnxMaxOpset = 17;

struct OnnxExportOptions {
  int opset = kOnnxDefaultOpset;  // 13..17
  std::string producer_version;   // default: Ember's version
  std::string doc;                // free text stored as the model's doc_string
  // Key/value pairs stored as the model's metadata_props (ember export: the
  // .ember file's source entries: run, class_names, input_transform...).
  std::map<std::string, std::string> metadata;
};

// The graph's node kinds (with counts) that have no ONNX lowering; empty when
// the whole graph exports.
std::vector<std::pair<std::string, int64_t>> onnx_unsupported_ops(const Graph& g);

// The serialized ModelProto. Throws one error listing every unsupported op
// (with counts), or naming the node whose lowering failed, or carrying ONNX's
// checker (full check) or shape-inference message.
std::string export_onnx_bytes(const Graph& g, const OnnxExportOptions& options = {});

// export_onnx_bytes written atomically to `path`.
void export_onnx(const Graph& g, const std::string& path, const OnnxExportOptions& options = {});
inline void export_onnx(const Graph& g, const std::string& path, int opset) {
  OnnxExportOptions o;
  o.opset = opset;
  export_onnx(g, path, o);
}

}  // namespace ember::jit

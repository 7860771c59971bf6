// The .ember model file (docs/file-formats.md): one safetensors file whose
// tensors are the graph's constants (weights and buffers by module path) and
// whose metadata holds the graph as JSON, the producer and the source run.
#pragma once

#include <map>
#include <string>

#include "ember/jit/graph.h"

namespace ember::jit {

// Version 2 adds the linear_dynamic_int8 node (int8 weights, jit::quantize_dynamic);
// version 3 the static int8 nodes quantize_static, conv2d_int8 and
// linear_int8 (jit::quantize_static); older files still load.
constexpr int kModelFormatVersion = 3;
constexpr int kMinModelFormatVersion = 1;

struct ModelFile {
  Graph graph;
  int format_version = kModelFormatVersion;
  std::string producer;        // "ember 0.1.0"
  std::map<std::string, std::string> source;  // run_dir, checkpoint, config_hash, commit, model... (free-form)
};

// Writes atomically (temporary file, fsync, rename).
void save_model(const ModelFile& model, const std::string& path);
// Checks everything and throws naming the file and the problem: not an
// Ember model, unknown format version, malformed graph JSON, unknown op, a
// weight missing, mis-shaped or unexpected, a truncated file.
ModelFile load_model(const std::string& path);

// The graph as JSON text and back (the "ember.graph" metadata entry);
// `source` names the text in errors. Constants' data is not in the JSON:
// from_json leaves Constant::data undefined.
std::string graph_to_json(const ModelFile& model);
ModelFile graph_from_json(const std::string& json, const std::string& source);

}  // namespace ember::jit

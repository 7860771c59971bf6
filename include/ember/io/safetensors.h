// safetensors files (https://github.com/huggingface/safetensors), with the
// names of the Python package: save_file / load_file, save / load on bytes.
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
//  ..., "__metadata__": {"key": "value"}}, then the tensors' bytes
// (contiguous, little-endian, offsets relative to the end of the header).
#pragma once

#include <map>
#include <string>

#include "ember/io/state_dict.h"

namespace ember::safetensors {

// Free-form string pairs stored under "__metadata__".
using Metadata = std::map<std::string, std::string>;

// Writes atomically: a temporary file in the same directory is written,
// fsynced and renamed over path, so a crash never leaves a partial file.
void save_file(const StateDict& tensors, const std::string& path, const Metadata& metadata = {});
// Tensors in file order; metadata (if non-null) receives "__metadata__".
// A truncated or malformed file raises naming the file and the problem.
StateDict load_file(const std::string& path, Metadata* metadata = nullptr);
// Only the metadata block (reads the header, not the tensors).
Metadata load_metadata(const std::string& path);

// In-memory forms; `source` names the bytes in error messages.
std::string save(const StateDict& tensors, const Metadata& metadata = {});
StateDict load(const std::string& bytes, Metadata* metadata = nullptr, const std::string& source = "<bytes>");

// "F32", "BF16", ... for an Ember dtype, and back (raises for unknown names).
const char* dtype_name(ScalarType t);
ScalarType dtype_from_name(const std::string& name);

}  // namespace ember::safetensors

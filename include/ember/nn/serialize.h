// Saving and loading a module's state_dict as a safetensors file.
#pragma once

#include <string>

#include "ember/io/safetensors.h"
#include "ember/nn/module.h"

namespace ember::nn {

// Writes module.state_dict() atomically (see safetensors::save_file).
void save(const Module& module, const std::string& path, const safetensors::Metadata& metadata = {});
// Reads path and load_state_dict(..., strict); errors name the file.
Module::LoadResult load(Module& module, const std::string& path, bool strict = true);

}  // namespace ember::nn

// nn::save / nn::load over safetensors.
#include "ember/nn/serialize.h"

namespace ember::nn {

void save(const Module& module, const std::string& path, const safetensors::Metadata& metadata) {
  safetensors::save_file(module.state_dict(), path, metadata);
}

Module::LoadResult load(Module& module, const std::string& path, bool strict) {
  StateDict dict = safetensors::load_file(path);
  try {
    return module.load_state_dict(dict, strict);
  } catch (const Error& e) {
    EMBER_ERROR("nn::load: '{}': {}", path, e.what());
  }
}

}  // namespace ember::nn

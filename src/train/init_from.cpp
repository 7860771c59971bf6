#include "init_from.h"

#include <filesystem>

#include "ember/core/error.h"
#include "ember/io/pytorch.h"
#include "ember/io/safetensors.h"
#include "ember/train/checkpoint.h"
#include "ember/train/config.h"

namespace ember::train {

namespace {

bool has_extension(const std::string& path, std::initializer_list<const char*> exts) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const char* e : exts)
    if (ext == e) return true;
  return false;
}

StateDict strip_prefix(const StateDict& in, const std::string& prefix) {
  StateDict out;
  for (const auto& [k, v] : in) out.insert(k.rfind(prefix, 0) == 0 ? k.substr(prefix.size()) : k, v);
  return out;
}

StateDict read_weights(const std::string& path) {
  if (has_extension(path, {".pt", ".pth", ".bin"})) return io::pytorch_state_dict(io::load_pytorch(path), "module.");
  if (has_extension(path, {".safetensors"})) return strip_prefix(safetensors::load_file(path), "module.");
  if (has_extension(path, {".ckpt"})) return load_checkpoint(path).model;
  throw ConfigError(fmt::format("model.init_from: '{}': expected a PyTorch state_dict (.pt, .pth, .bin), a "
                                ".safetensors file or an Ember checkpoint (.ckpt)",
                                path));
}

}  // namespace

void load_initial_weights(nn::Module& model, const std::string& path) {
  if (path.empty()) return;
  if (!std::filesystem::is_regular_file(path))
    throw ConfigError(fmt::format("model.init_from: '{}' is not a file", path));
  StateDict weights;
  try {
    weights = read_weights(path);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(fmt::format("model.init_from: cannot read '{}': {}", path, e.what()));
  }
  try {
    model.load_state_dict(weights, /*strict=*/true);
  } catch (const Error& e) {
    throw ConfigError(fmt::format("model.init_from: '{}' does not fit the model ({}): {}", path, model.type_name(),
                                  e.what()));
  }
}

}  // namespace ember::train

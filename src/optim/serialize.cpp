// optim::save / optim::load over safetensors.
#include "ember/optim/serialize.h"

#include <charconv>

#include "ember/io/safetensors.h"

namespace ember::optim {

namespace {

constexpr const char* kFormatKey = "format";
constexpr const char* kNameKey = "optimizer";

safetensors::Metadata header(const std::string& name) {
  safetensors::Metadata m{{kFormatKey, kOptimizerFileFormat}};
  if (!name.empty()) m[kNameKey] = name;
  return m;
}

void write(const OptimizerStateDict& state, const std::string& path, safetensors::Metadata meta) {
  StateDict tensors;
  for (const auto& [k, v] : state.tensors()) tensors.insert(k, v);
  // fmt's "{}" is the shortest decimal that parses back to the same double.
  for (const auto& [k, v] : state.metadata()) meta[k] = fmt::format("{}", v);
  safetensors::save_file(tensors, path, meta);
}

double parse_option(const std::string& key, const std::string& text, const std::string& path) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EMBER_CHECK(ec == std::errc() && end == text.data() + text.size(),
              "optim::load: '{}': metadata '{}' = '{}' is not a number; the file is corrupt", path, key, text);
  return v;
}

}  // namespace

void save(const OptimizerStateDict& state, const std::string& path) { write(state, path, header("")); }

void save(const Optimizer& optimizer, const std::string& path) {
  write(optimizer.state_dict(), path, header(optimizer.name()));
}

OptimizerStateDict load_state_dict(const std::string& path) {
  safetensors::Metadata meta;
  StateDict tensors = safetensors::load_file(path, &meta);
  auto format = meta.find(kFormatKey);
  EMBER_CHECK(format != meta.end() && format->second == kOptimizerFileFormat,
              "optim::load: '{}' is not an optimizer state file (format '{}', expected '{}'); a training "
              "checkpoint loads with train::load_checkpoint", path, format == meta.end() ? "none" : format->second,
              kOptimizerFileFormat);
  OptionMap options;
  for (const auto& [k, v] : meta)
    if (k != kFormatKey && k != kNameKey) options[k] = parse_option(k, v, path);
  std::map<std::string, Tensor> flat(tensors.begin(), tensors.end());
  try {
    return OptimizerStateDict::from_flat(flat, options);
  } catch (const Error& e) {
    EMBER_ERROR("optim::load: '{}': {}", path, e.what());
  }
}

void load(Optimizer& optimizer, const std::string& path) {
  const safetensors::Metadata meta = safetensors::load_metadata(path);
  auto name = meta.find(kNameKey);
  EMBER_CHECK(name == meta.end() || name->second == optimizer.name(),
              "optim::load: '{}' holds the state of {}, not of {}; build the optimizer it was saved from",
              path, name->second, optimizer.name());
  OptimizerStateDict state = load_state_dict(path);
  try {
    optimizer.load_state_dict(state);
  } catch (const Error& e) {
    EMBER_ERROR("optim::load: '{}': {}", path, e.what());
  }
}

}  // namespace ember::optim

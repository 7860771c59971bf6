#include "ember/train/checkpoint.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/io/safetensors.h"

namespace ember::train {

namespace {

using json = nlohmann::json;

constexpr const char* kModelPrefix = "model.";
constexpr const char* kOptimPrefix = "optim.";
constexpr const char* kRngKey = "rng.global";

template <typename Map>
std::string map_to_json(const Map& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j.dump();
}

std::map<std::string, double> json_to_map(const std::string& text, const std::string& path, const char* what) {
  json j = json::parse(text, nullptr, false);
  EMBER_CHECK(!j.is_discarded() && j.is_object(), "checkpoint '{}': metadata '{}' is not a JSON object; the file is "
              "corrupt", path, what);
  std::map<std::string, double> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    EMBER_CHECK(it.value().is_number(), "checkpoint '{}': metadata '{}' entry '{}' is not a number", path, what,
                it.key());
    out[it.key()] = it.value().get<double>();
  }
  return out;
}

const std::string& require(const safetensors::Metadata& m, const char* key, const std::string& path);

int64_t parse_count(const safetensors::Metadata& m, const char* key, const std::string& path) {
  const std::string& text = require(m, key, path);
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EMBER_CHECK(ec == std::errc() && end == text.data() + text.size() && v >= 0,
              "checkpoint '{}': metadata '{}' = '{}' is not a count", path, key, text);
  return v;
}

const std::string& require(const safetensors::Metadata& m, const char* key, const std::string& path) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "checkpoint '{}': metadata has no '{}'; the file is corrupt or not an Ember checkpoint",
              path, key);
  return it->second;
}

}  // namespace

void save_checkpoint(const Checkpoint& ckpt, const std::string& path) {
  StateDict tensors;
  for (const auto& [k, v] : ckpt.model) tensors.insert(kModelPrefix + k, v);
  for (const auto& [k, v] : ckpt.optimizer.tensors()) tensors.insert(kOptimPrefix + k, v);
  if (ckpt.rng_state.defined()) tensors.insert(kRngKey, ckpt.rng_state);
  safetensors::Metadata meta{
      {"format", kCheckpointFormat},
      {"ember_version", ckpt.ember_version.empty() ? std::string(version()) : ckpt.ember_version},
      {"epoch", std::to_string(ckpt.epoch)},
      {"step", std::to_string(ckpt.step)},
      {"config", ckpt.config_yaml},
      {"metrics_csv", ckpt.metrics_csv},
      {"trainer", ckpt.trainer_json.empty() ? "{}" : ckpt.trainer_json},
      {"scheduler", map_to_json(ckpt.scheduler)},
      {"optimizer", map_to_json(ckpt.optimizer.metadata())},
  };
  safetensors::save_file(tensors, path, meta);
}

Checkpoint load_checkpoint(const std::string& path) {
  safetensors::Metadata meta;
  StateDict tensors = safetensors::load_file(path, &meta);
  auto fmt_it = meta.find("format");
  EMBER_CHECK(fmt_it != meta.end() && fmt_it->second == kCheckpointFormat,
              "checkpoint '{}': not an Ember training checkpoint (format '{}', expected '{}'); plain weights load "
              "with safetensors::load_file", path, fmt_it == meta.end() ? "none" : fmt_it->second,
              kCheckpointFormat);
  Checkpoint c;
  c.ember_version = require(meta, "ember_version", path);
  c.epoch = parse_count(meta, "epoch", path);
  c.step = parse_count(meta, "step", path);
  c.config_yaml = require(meta, "config", path);
  c.metrics_csv = require(meta, "metrics_csv", path);
  c.trainer_json = require(meta, "trainer", path);
  c.scheduler = json_to_map(require(meta, "scheduler", path), path, "scheduler");
  optim::OptionMap optim_meta = json_to_map(require(meta, "optimizer", path), path, "optimizer");
  std::map<std::string, Tensor> optim_tensors;
  const std::string mp = kModelPrefix, op = kOptimPrefix;
  for (const auto& [k, v] : tensors) {
    if (k.rfind(mp, 0) == 0) c.model.insert(k.substr(mp.size()), v);
    else if (k.rfind(op, 0) == 0) optim_tensors[k.substr(op.size())] = v;
    else if (k == kRngKey) c.rng_state = v;
    else EMBER_CHECK(false, "checkpoint '{}': unexpected tensor '{}'", path, k);
  }
  EMBER_CHECK(!c.rng_state.defined() || (c.rng_state.dtype() == kUInt8 && c.rng_state.numel() == 16),
              "checkpoint '{}': tensor '{}' should hold the 16 bytes of a generator state, it is {} [{}]; the file "
              "is corrupt", path, kRngKey, to_string(c.rng_state.dtype()), fmt::join(c.rng_state.sizes(), ", "));
  // The optimizer's flat form is untrusted here: from_flat bounds what the
  // metadata may allocate; its errors name the key, this names the file.
  try {
    c.optimizer = optim::OptimizerStateDict::from_flat(optim_tensors, optim_meta);
  } catch (const Error& e) {
    EMBER_ERROR("checkpoint '{}': metadata 'optimizer': {}", path, e.what());
  }
  return c;
}

}  // namespace ember::train

// The model registry. Zoo models register themselves in zoo_models.cpp;
// programs add their own with register_model / ModelRegistration.
#include "ember/train/zoo.h"

#include <algorithm>
#include <mutex>

namespace ember::train {

namespace {
struct Registry {
  std::mutex mu;
  std::vector<ModelEntry> entries;
};
// Function-local so registration from other translation units' static
// initialisers finds it constructed.
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

void register_model(ModelEntry entry) {
  EMBER_CHECK(!entry.name.empty() && entry.factory, "register_model: a model needs a name and a factory");
  for (const OptionSpec& o : entry.options.options())
    EMBER_CHECK(o.key.rfind("model.", 0) == 0, "register_model('{}'): option '{}' must start with 'model.'",
                entry.name, o.key);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = std::find_if(r.entries.begin(), r.entries.end(), [&](const ModelEntry& e) { return e.name == entry.name; });
  if (it != r.entries.end()) *it = std::move(entry);
  else r.entries.push_back(std::move(entry));
}

const ModelEntry& find_model(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const ModelEntry& e : r.entries)
    if (e.name == name) return e;
  std::vector<std::string> names;
  for (const ModelEntry& e : r.entries) names.push_back(e.name);
  throw ConfigError(fmt::format("unknown model '{}' (model.name); the zoo has: {}", name, fmt::join(names, ", ")));
}

std::vector<std::string> model_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const ModelEntry& e : r.entries) names.push_back(e.name);
  return names;
}

nn::ModulePtr build_model(const Config& config, const DataInfo& info) {
  return find_model(config.get_string("model.name")).factory(config, info);
}

Tensor model_forward(nn::Module& model, const data::Sample& input) {
  if (auto* sm = dynamic_cast<SampleModule*>(&model)) return sm->forward_sample(input);
  EMBER_CHECK(input.is_tensor(), "model_forward: {} takes one tensor, but the batch input is {}; models of "
              "token sequences derive from train::SampleModule", model.type_name(), input.describe());
  return model.forward(input.tensor());
}

}  // namespace ember::train

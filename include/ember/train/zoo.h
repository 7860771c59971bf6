// The model zoo: models built by name from a Config (model.* options) and
// the shape of the data. Users register their own models the same way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/datasets/csv.h"
#include "ember/data/image_preprocess.h"
#include "ember/data/sample.h"
#include "ember/nn/module.h"
#include "ember/train/config.h"

namespace ember::train {

enum class Task { Classification, Regression };

// What the model needs to know about the data.
struct DataInfo {
  Task task = Task::Classification;
  std::vector<int64_t> input_shape;  // one sample, e.g. {1, 28, 28}; {F} for tabular; {} for token sequences
  int64_t num_classes = 0;           // classification; outputs for regression
  std::vector<std::string> class_names;
  int64_t vocab_size = 0;  // text data sets
  int64_t pad_index = 0;
  // Image data sets: what evaluation does to an image before the model
  // (`ember export` records it for `ember infer`).
  std::optional<data::ImagePreprocess> image_preprocess;
  // CSV data sets: the standardisation fitted on the training rows.
  std::optional<data::Standardizer> feature_standardizer;
};

// A model whose input is not a single tensor (token ids + lengths). The
// trainer calls forward_sample with the input part of a batch; modules that
// do not derive from this get input.tensor() through Module::forward.
class SampleModule : public nn::Module {
 public:
  using nn::Module::Module;
  virtual Tensor forward_sample(const data::Sample& input) = 0;
};

// Runs `model` on the input part of a batch.
Tensor model_forward(nn::Module& model, const data::Sample& input);

using ModelFactory = std::function<nn::ModulePtr(const Config& config, const DataInfo& info)>;

struct ModelEntry {
  std::string name;
  std::string help;
  Schema options;  // keys "model.<option>"
  ModelFactory factory;
};

// Registers a model under `name` (replacing one of the same name).
void register_model(ModelEntry entry);
// Throws ConfigError listing the zoo when `name` is unknown.
const ModelEntry& find_model(const std::string& name);
std::vector<std::string> model_names();
// find_model(config model.name).factory(config, info).
nn::ModulePtr build_model(const Config& config, const DataInfo& info);

// Registers a model at static-initialisation time:
//   static ember::train::ModelRegistration reg{{"mine", "help", schema, factory}};
struct ModelRegistration {
  explicit ModelRegistration(ModelEntry entry) { register_model(std::move(entry)); }
};

}  // namespace ember::train

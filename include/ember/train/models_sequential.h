// model.name=sequential: a model defined in the config as a list of layers
// with PyTorch's names and arguments (model.layers), built by walking the
// data's sample shape so in_channels / in_features / input_size and
// num_embeddings are inferred, as PyTorch's Lazy modules infer them.
#pragma once

#include <memory>
#include <string>

#include "ember/nn/container.h"
#include "ember/train/zoo.h"

namespace ember::train {

// Layers whose forward can use the lengths of a padded batch (lstm, gru).
class LengthsAware {
 public:
  virtual ~LengthsAware() = default;
  virtual Tensor forward_lengths(const Tensor& input, const Tensor& lengths) = 0;
};

// The layers as children "0", "1", ... so state_dict keys are those of the
// same torch.nn.Sequential ("0.weight", "3.running_mean"); a residual block
// is a child whose own children are numbered the same way ("2.0.weight").
// Input: a tensor, or (token ids, lengths) for text data sets, whose lengths
// reach the recurrent layers.
class SequentialModel : public SampleModule {
 public:
  SequentialModel();
  void push_back(nn::ModulePtr layer);
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& input, const Tensor& lengths);
  Tensor forward_sample(const data::Sample& input) override;
  size_t size() const { return layers_.size(); }

 private:
  std::vector<nn::ModulePtr> layers_;
};

// Builds the model of `layers_yaml` (model.layers: a YAML list, one layer an
// item) for data described by `info`. Throws ConfigError naming the layer
// (model.layers[i]), the key and the valid choices for an unknown layer or
// argument, and the layer for a shape that does not fit.
std::shared_ptr<SequentialModel> build_sequential(const std::string& layers_yaml, const DataInfo& info);

// The layer names model.layers accepts.
std::vector<std::string> sequential_layer_names();

}  // namespace ember::train

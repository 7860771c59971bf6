// The zoo's feed-forward models: MLP and the W1 CNN.
#include "ember/train/models.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/nn/activation.h"
#include "ember/nn/flatten.h"

namespace ember::train {

namespace {

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

nn::ModulePtr make_activation(const std::string& name) {
  if (name == "relu") return std::make_shared<nn::ReLU>();
  if (name == "gelu") return std::make_shared<nn::GELU>();
  if (name == "tanh") return std::make_shared<nn::Tanh>();
  if (name == "silu") return std::make_shared<nn::SiLU>();
  EMBER_CHECK(false, "MLP: expected activation \"relu\", \"gelu\", \"tanh\" or \"silu\", got \"{}\"", name);
  return nullptr;
}

}  // namespace

// ---- MLP ----

MLP::MLP(const MLPOptions& options_) : Module("MLP"), options(options_) {
  EMBER_CHECK(options.in_features > 0 && options.out_features > 0,
              "MLP: expected in_features and out_features > 0, got in_features={}, out_features={}",
              options.in_features, options.out_features);
  EMBER_CHECK(options.dropout >= 0 && options.dropout < 1, "MLP: expected dropout in [0, 1), got {}",
              options.dropout);
  layers = register_module("layers", std::make_shared<nn::Sequential>());
  int64_t prev = options.in_features;
  for (int64_t h : options.hidden) {
    EMBER_CHECK(h > 0, "MLP: expected positive hidden widths, got [{}]", fmt::join(options.hidden, ", "));
    layers->push_back(std::make_shared<nn::Linear>(prev, h));
    layers->push_back(make_activation(options.activation));
    if (options.dropout > 0) layers->push_back(std::make_shared<nn::Dropout>(options.dropout));
    prev = h;
  }
  layers->push_back(std::make_shared<nn::Linear>(prev, options.out_features));
}

Tensor MLP::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 1, "MLP: expected input [B, ...], got {}", shape_str(input));
  Tensor x = input.dim() == 1 ? input.unsqueeze(1) : input.flatten(1);
  EMBER_CHECK(x.size(1) == options.in_features,
              "MLP: expected {} features per sample (in_features), got input {} ({} features); set in_features to "
              "the product of the non-batch dims",
              options.in_features, shape_str(input), x.size(1));
  return layers->forward(x);
}

// ---- CNN ----

CNN::CNN(const CNNOptions& options_) : options(options_) {
  const auto& o = options;
  EMBER_CHECK(o.in_channels > 0 && o.num_classes > 0 && o.hidden > 0 && !o.channels.empty(),
              "CNN: expected in_channels, num_classes, hidden > 0 and at least one conv block, got in_channels={}, "
              "num_classes={}, hidden={}, channels=[{}]",
              o.in_channels, o.num_classes, o.hidden, fmt::join(o.channels, ", "));
  const int64_t scale = int64_t{1} << o.channels.size();
  EMBER_CHECK(o.height > 0 && o.width > 0 && o.height % scale == 0 && o.width % scale == 0,
              "CNN: height and width must be positive multiples of {} (one 2x2 max-pool per conv block), got {}x{}",
              scale, o.height, o.width);
  int64_t prev = o.in_channels;
  for (int64_t c : o.channels) {
    push_back(std::make_shared<nn::Conv2d>(prev, c, 3, 1, 1));
    push_back(std::make_shared<nn::BatchNorm2d>(c));
    push_back(std::make_shared<nn::ReLU>());
    push_back(std::make_shared<nn::MaxPool2d>(2));
    prev = c;
  }
  push_back(std::make_shared<nn::Flatten>());
  push_back(std::make_shared<nn::Linear>(prev * (o.height / scale) * (o.width / scale), o.hidden));
  push_back(std::make_shared<nn::ReLU>());
  push_back(std::make_shared<nn::Dropout>(o.dropout));
  push_back(std::make_shared<nn::Linear>(o.hidden, o.num_classes));
}

Tensor CNN::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 4 && input.size(1) == options.in_channels && input.size(2) == options.height &&
                  input.size(3) == options.width,
              "CNN: expected input [B, {}, {}, {}] (in_channels, height, width), got {}", options.in_channels,
              options.height, options.width, shape_str(input));
  return Sequential::forward(input);
}

}  // namespace ember::train

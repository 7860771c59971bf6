// The model zoo's models: MLP, CNN, ResNet (CIFAR-style), LSTMClassifier
// and TransformerClassifier. Each takes a plain options struct; submodules
// carry the names of the obvious PyTorch twin (tests/data/gen_models.py),
// so state_dict keys, parameter counts and values match it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/nn/container.h"
#include "ember/nn/conv.h"
#include "ember/nn/dropout.h"
#include "ember/nn/embedding.h"
#include "ember/nn/linear.h"
#include "ember/nn/normalization.h"
#include "ember/nn/pooling.h"
#include "ember/nn/rnn.h"
#include "ember/nn/transformer.h"
#include "ember/train/zoo.h"

namespace ember::train {

// ---- MLP ----

struct MLPOptions {
  int64_t in_features = 0;  // product of the non-batch input dims
  std::vector<int64_t> hidden = {256, 256};
  int64_t out_features = 0;
  // Dropout after each hidden activation; no Dropout module when 0 (so the
  // Sequential indices are those of the twin built without one).
  double dropout = 0;
  // "relu", "gelu", "tanh" or "silu".
  std::string activation = "relu";
};

// Flatten [B, ...] -> [B, in_features], then `layers`: Linear, activation
// [, Dropout] per hidden width, and a final Linear (keys layers.0.weight, ...).
class MLP : public nn::Module {
 public:
  explicit MLP(const MLPOptions& options);
  Tensor forward(const Tensor& input) override;

  const MLPOptions options;
  std::shared_ptr<nn::Sequential> layers;
};

// ---- CNN (BENCHMARKS.md W1) ----

struct CNNOptions {
  int64_t in_channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t num_classes = 10;
  // One Conv2d(3x3, padding 1) - BatchNorm2d - ReLU - MaxPool2d(2) block per
  // entry; height and width must be divisible by 2^blocks.
  std::vector<int64_t> channels = {32, 64};
  int64_t hidden = 128;
  double dropout = 0.25;
};

// The W1 reference model, a Sequential exactly like the anchor's
// (/work/shared/anchors/w1_fmnist_cnn.py), so its keys are "0.weight",
// "1.running_mean", ..., "9.weight", "12.bias" with the default options:
//   Conv2d(C, 32, 3, padding=1) BatchNorm2d(32) ReLU MaxPool2d(2)
//   Conv2d(32, 64, 3, padding=1) BatchNorm2d(64) ReLU MaxPool2d(2)
//   Flatten Linear(64*(H/4)*(W/4), 128) ReLU Dropout(0.25) Linear(128, classes)
// The Dropout module is always present (index stability).
class CNN : public nn::Sequential {
 public:
  explicit CNN(const CNNOptions& options);
  Tensor forward(const Tensor& input) override;

  const CNNOptions options;
};

// ---- ResNet (CIFAR-style) ----

struct ResNetOptions {
  // 18 ([2, 2, 2, 2] blocks) or 34 ([3, 4, 6, 3]): torchvision's four
  // stages; or 6n + 2 (8, 14, 20, 32, 44, 56, 110): He et al. (2016)
  // section 4.2's three stages of n blocks for 32x32 images.
  int64_t depth = 18;
  int64_t in_channels = 3;
  int64_t num_classes = 10;
  int64_t width = 0;  // first stage's width, doubling per stage; 0: 64 (18, 34) or 16 (6n + 2)
};

// Whether `depth` names a ResNet above: 18, 34 or 6n + 2.
bool is_resnet_depth(int64_t depth);

// torchvision's BasicBlock: conv1 (3x3, stride) bn1 relu conv2 (3x3) bn2,
// plus the identity or downsample (Sequential of 1x1 conv, stride + bn).
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride);
  Tensor forward(const Tensor& input) override;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::Conv2d> conv2;
  std::shared_ptr<nn::BatchNorm2d> bn2;
  std::shared_ptr<nn::Sequential> downsample;  // null for the identity
};

// torchvision's ResNet with a CIFAR stem: conv1 is 3x3 stride 1 (no bias)
// and there is no maxpool; then bn1, relu, layer1..layer4 (strides 1, 2, 2,
// 2; depth 6n + 2 has no layer4), adaptive average pooling to 1x1 and fc.
// Shortcuts that change shape are 1x1 projections (the paper's option B;
// its CIFAR nets used zero-padding, option A, with 2,752 fewer parameters
// at depth 20). Initialised like torchvision:
// conv weights kaiming_normal_(fan_out, relu), BatchNorm weight 1, bias 0.
// Input [B, in_channels, H, W], any H, W >= 8.
class ResNet : public nn::Module {
 public:
  explicit ResNet(const ResNetOptions& options);
  Tensor forward(const Tensor& input) override;

  const ResNetOptions options;
  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3, layer4;  // layer4: null for 6n + 2
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

// ---- text classifiers: input (tokens int64 [B, T], lengths int64 [B]) ----

struct LSTMClassifierOptions {
  int64_t vocab_size = 0;
  int64_t embed_dim = 128;
  std::optional<int64_t> padding_idx = 0;
  std::string cell = "lstm";  // "lstm" or "gru"
  int64_t hidden = 128;
  int64_t num_layers = 1;
  bool bidirectional = false;
  // Between RNN layers (when num_layers > 1) and before the classifier.
  double dropout = 0;
  int64_t num_classes = 2;
};

// embedding -> rnn (batch_first, over the true lengths, Note [rnn forward])
// -> the last layer's final hidden state (both directions concatenated,
// forward first) -> dropout -> fc. Padding never changes the result.
class LSTMClassifier : public SampleModule {
 public:
  explicit LSTMClassifier(const LSTMClassifierOptions& options);
  // Every sequence full length.
  Tensor forward(const Tensor& tokens) override;
  Tensor forward(const Tensor& tokens, const Tensor& lengths);
  // (tokens, lengths), or tokens alone.
  Tensor forward_sample(const data::Sample& input) override;

  const LSTMClassifierOptions options;
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::RNNBase> rnn;  // nn::LSTM or nn::GRU
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::Linear> fc;
};

struct TransformerClassifierOptions {
  int64_t vocab_size = 0;
  int64_t d_model = 128;
  std::optional<int64_t> padding_idx = 0;
  int64_t max_len = 512;  // positions of pos_embedding
  int64_t num_layers = 2;
  int64_t nhead = 4;
  int64_t dim_feedforward = 256;
  double dropout = 0.1;
  std::string activation = "relu";
  int64_t num_classes = 2;
};

// embedding(tokens) + pos_embedding(0..T-1) -> dropout -> encoder
// (batch_first, post-norm, key padding mask from lengths) -> mean over the
// non-pad positions -> fc. Keys: embedding.weight, pos_embedding.weight,
// encoder.layers.0.self_attn.in_proj_weight, ..., fc.weight, fc.bias.
class TransformerClassifier : public SampleModule {
 public:
  explicit TransformerClassifier(const TransformerClassifierOptions& options);
  Tensor forward(const Tensor& tokens) override;
  Tensor forward(const Tensor& tokens, const Tensor& lengths);
  Tensor forward_sample(const data::Sample& input) override;

  const TransformerClassifierOptions options;
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::Embedding> pos_embedding;
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::TransformerEncoder> encoder;
  std::shared_ptr<nn::Linear> fc;
};

}  // namespace ember::train

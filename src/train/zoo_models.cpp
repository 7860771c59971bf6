// The zoo's models, registered under their config names with their options.
#include "ember/train/models.h"
#include "ember/train/models_sequential.h"
#include "ember/train/zoo.h"

namespace ember::train {

namespace {

using I = std::vector<int64_t>;

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void require_image(const DataInfo& info, const char* model) {
  if (info.input_shape.size() != 3)
    throw ConfigError(fmt::format("model '{}' needs images [C, H, W], but the data set gives samples of shape [{}]; "
                                  "use model.name=mlp for tabular data", model, fmt::join(info.input_shape, ", ")));
}

void require_tokens(const DataInfo& info, const char* model) {
  if (info.vocab_size <= 0)
    throw ConfigError(fmt::format("model '{}' reads token sequences; use it with data.dataset=text", model));
}

ModelEntry mlp_entry() {
  return {"mlp", "multi-layer perceptron over the flattened input",
          Schema{{"model.hidden", ValueType::IntList, I{256, 256}, "hidden layer sizes", {}, "[1, inf)"},
                 {"model.dropout", ValueType::Float, 0.0, "dropout after each hidden layer", {}, "[0, 1)"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            MLPOptions o;
            o.in_features = numel_of(info.input_shape);
            o.hidden = c.get_int_list("model.hidden");
            o.out_features = info.num_classes;
            o.dropout = c.get_float("model.dropout");
            return std::make_shared<MLP>(o);
          }};
}

ModelEntry cnn_entry() {
  return {"cnn",
          "Conv32-BN-ReLU-Pool, Conv64-BN-ReLU-Pool, Linear 128, Dropout, Linear (the W1 benchmark: "
          "configs/bench/w1_fmnist_cnn.yaml)",
          Schema{{"model.channels", ValueType::IntList, I{32, 64}, "channels of the two conv blocks", {}, "[1, inf)"},
                 {"model.hidden", ValueType::Int, int64_t{128}, "width of the hidden linear layer", {}, "[1, inf)"},
                 {"model.dropout", ValueType::Float, 0.25, "dropout before the classifier", {}, "[0, 1]"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            require_image(info, "cnn");
            CNNOptions o;
            o.in_channels = info.input_shape[0], o.height = info.input_shape[1], o.width = info.input_shape[2];
            o.num_classes = info.num_classes;
            o.channels = c.get_int_list("model.channels");
            o.hidden = c.get_int("model.hidden");
            o.dropout = c.get_float("model.dropout");
            return std::make_shared<CNN>(o);
          }};
}

std::string resnet_depth_rule(const Value& v) {
  const int64_t depth = std::get<int64_t>(v);
  if (depth == 50 || depth == 101 || depth == 152)
    return fmt::format("ResNet-{} is torchvision's bottleneck net, which the zoo does not have; expected 18, 34 or "
                       "6n + 2 (8, 14, 20, 32, 44, 56, 110, ...)", depth);
  if (!is_resnet_depth(depth))
    return fmt::format("expected 18, 34 or 6n + 2 (8, 14, 20, 32, 44, 56, 110, ...), got {}", depth);
  return "";
}

ModelEntry resnet_entry() {
  return {"resnet", "ResNet for small images (3x3 stem, no max-pool): 18/34, or 6n+2 (20, 56, ...) in three stages",
          Schema{{"model.depth", ValueType::Int, int64_t{18},
                  "18 or 34 (four stages), or 6n + 2: 8, 14, 20, 32, 44, 56, 110 (three stages)", {}, "[8, 10000]", 0,
                  resnet_depth_rule},
                 {"model.width", ValueType::Int, int64_t{0},
                  "channels of the first stage, doubling per stage (0: 64 for 18/34, 16 for 6n + 2)", {}, "[0, inf)"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            require_image(info, "resnet");
            ResNetOptions o;
            o.depth = c.get_int("model.depth");  // resnet_depth_rule checked it
            o.in_channels = info.input_shape[0];
            o.num_classes = info.num_classes;
            o.width = c.get_int("model.width");
            return std::make_shared<ResNet>(o);
          }};
}

ModelEntry lstm_entry() {
  return {"lstm_classifier", "embedding + LSTM/GRU over variable-length token sequences + linear",
          Schema{{"model.cell", ValueType::String, std::string("lstm"), "recurrent cell", {"lstm", "gru"}},
                 {"model.embed_dim", ValueType::Int, int64_t{128}, "embedding size", {}, "[1, inf)"},
                 {"model.hidden", ValueType::Int, int64_t{128}, "hidden size", {}, "[1, inf)"},
                 {"model.num_layers", ValueType::Int, int64_t{1}, "stacked layers", {}, "[1, inf)"},
                 {"model.bidirectional", ValueType::Bool, false, "read both directions"},
                 {"model.dropout", ValueType::Float, 0.0, "dropout between layers and before the classifier",
                  {}, "[0, 1]"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            require_tokens(info, "lstm_classifier");
            LSTMClassifierOptions o;
            o.vocab_size = info.vocab_size;
            o.padding_idx = info.pad_index;
            o.cell = c.get_string("model.cell");
            o.embed_dim = c.get_int("model.embed_dim");
            o.hidden = c.get_int("model.hidden");
            o.num_layers = c.get_int("model.num_layers");
            o.bidirectional = c.get_bool("model.bidirectional");
            o.dropout = c.get_float("model.dropout");
            o.num_classes = info.num_classes;
            return std::make_shared<LSTMClassifier>(o);
          }};
}

ModelEntry transformer_entry() {
  return {"transformer_classifier", "token + position embedding, Transformer encoder, mean pooling, linear",
          Schema{{"model.d_model", ValueType::Int, int64_t{128}, "model width", {}, "[1, inf)"},
                 {"model.nhead", ValueType::Int, int64_t{4}, "attention heads", {}, "[1, inf)"},
                 {"model.num_layers", ValueType::Int, int64_t{2}, "encoder layers", {}, "[1, inf)"},
                 {"model.dim_feedforward", ValueType::Int, int64_t{256}, "feed-forward width", {}, "[1, inf)"},
                 {"model.max_len", ValueType::Int, int64_t{512}, "longest sequence (positions)", {}, "[1, inf)"},
                 {"model.dropout", ValueType::Float, 0.1, "dropout", {}, "[0, 1]"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            require_tokens(info, "transformer_classifier");
            TransformerClassifierOptions o;
            o.vocab_size = info.vocab_size;
            o.padding_idx = info.pad_index;
            o.d_model = c.get_int("model.d_model");
            o.nhead = c.get_int("model.nhead");
            o.num_layers = c.get_int("model.num_layers");
            o.dim_feedforward = c.get_int("model.dim_feedforward");
            o.max_len = c.get_int("model.max_len");
            o.dropout = c.get_float("model.dropout");
            o.num_classes = info.num_classes;
            return std::make_shared<TransformerClassifier>(o);
          }};
}

ModelEntry sequential_entry() {
  return {"sequential", "layers listed in model.layers, with PyTorch's names and arguments (nn.Sequential's keys)",
          Schema{{"model.layers", ValueType::String, std::string(""),
                  "a YAML list, one layer an item: '- conv2d: {out_channels: 32, kernel_size: 3}', '- relu', "
                  "'- residual: [...]'; input sizes are inferred"}},
          [](const Config& c, const DataInfo& info) -> nn::ModulePtr {
            return build_sequential(c.get_string("model.layers"), info);
          }};
}

// Registered in order: the first is the default of `ember train --help`.
const ModelRegistration kRegistrations[] = {ModelRegistration(cnn_entry()), ModelRegistration(mlp_entry()),
                                            ModelRegistration(resnet_entry()), ModelRegistration(lstm_entry()),
                                            ModelRegistration(transformer_entry()),
                                            ModelRegistration(sequential_entry())};

}  // namespace

}  // namespace ember::train

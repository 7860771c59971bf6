// model.name=sequential: layers from the config (see models_sequential.h).
#include "ember/train/models_sequential.h"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>

#include "ember/core/grad_mode.h"
#include "ember/nn/activation.h"
#include "ember/nn/conv.h"
#include "ember/nn/dropout.h"
#include "ember/nn/embedding.h"
#include "ember/nn/flatten.h"
#include "ember/nn/linear.h"
#include "ember/nn/normalization.h"
#include "ember/nn/pooling.h"
#include "ember/nn/rnn.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/train/config.h"

namespace ember::train {

namespace {

std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s.vec(), ", ")); }

// A layer's feature from a recurrent module: the last layer's final hidden
// state (both directions concatenated), i.e. PyTorch's `h_n[-1]` (or
// `cat(h_n[-2], h_n[-1])`); with lengths, the state at each sequence's own
// length, as after pack_padded_sequence.
template <class Rnn>
class Recurrent : public Rnn, public LengthsAware {
 public:
  using Rnn::Rnn;
  Tensor forward(const Tensor& input) override { return forward_lengths(input, Tensor()); }
  Tensor forward_lengths(const Tensor& input, const Tensor& lengths) override {
    Tensor h_n = final_state(input, lengths);
    const int64_t n = h_n.size(0);
    if (!this->bidirectional) return h_n.select(0, n - 1);
    return cat({h_n.select(0, n - 2), h_n.select(0, n - 1)}, 1);
  }

 private:
  Tensor final_state(const Tensor& x, const Tensor& lengths) {
    if constexpr (std::is_same_v<Rnn, nn::LSTM>)
      return (lengths.defined() ? Rnn::forward(x, lengths, {}) : Rnn::forward(x)).second.first;
    else
      return (lengths.defined() ? Rnn::forward(x, lengths, Tensor()) : Rnn::forward(x)).second;
  }
};

// x + f(x); f's layers are this module's children "0", "1", ...
class Residual : public nn::Module {
 public:
  explicit Residual(std::shared_ptr<SequentialModel> body) : Module("Residual"), body_(std::move(body)) {
    for (const auto& [name, child] : body_->named_children()) register_module(name, child);
  }
  Tensor forward(const Tensor& x) override { return add(x, body_->forward(x)); }

 private:
  std::shared_ptr<SequentialModel> body_;  // runs the children in order
};

// ---- reading one layer's arguments ----

// The arguments of one layer, each read at most once; what is left over is an
// unknown argument (an error naming the valid ones).
class Args {
 public:
  Args(std::string where, std::string layer, std::vector<std::string> valid, const YAML::Node& map)
      : where_(std::move(where)), layer_(std::move(layer)), valid_(std::move(valid)) {
    if (!map || map.IsNull()) return;
    if (!map.IsMap()) fail(fmt::format("the arguments of '{}' must be a mapping (e.g. {{p: 0.5}}), got '{}'", layer_,
                                       YAML::Dump(map)));
    for (const auto& kv : map) given_[kv.first.as<std::string>()] = kv.second;
    check_known();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(fmt::format("{} ({}): {}", where_, layer_, what));
  }
  bool has(const std::string& key) const {
    EMBER_ASSERT(std::find(valid_.begin(), valid_.end(), key) != valid_.end(), "{}: '{}' is not in its argument list",
                 layer_, key);
    return given_.count(key) > 0;
  }
  int64_t int_(const std::string& key, std::optional<int64_t> def = std::nullopt) {
    if (!has(key)) return def ? *def : missing(key);
    return scalar<int64_t>(key, "an integer");
  }
  double float_(const std::string& key, double def) { return has(key) ? scalar<double>(key, "a number") : def; }
  bool bool_(const std::string& key, bool def) { return has(key) ? scalar<bool>(key, "true or false") : def; }
  std::string choice(const std::string& key, const std::vector<std::string>& choices) {
    if (!has(key)) return choices.front();
    std::string v = scalar<std::string>(key, "a string");
    if (std::find(choices.begin(), choices.end(), v) == choices.end())
      fail(fmt::format("argument '{}' must be one of {}, got '{}'", key, fmt::join(choices, ", "), v));
    return v;
  }
  // An int or [a, b] (PyTorch's _pair).
  nn::ExpandingArray<2> pair(const std::string& key, std::optional<int64_t> def = std::nullopt) {
    if (!has(key)) return def ? nn::ExpandingArray<2>(*def) : nn::ExpandingArray<2>(missing(key));
    const YAML::Node& n = given_.at(key);
    if (n.IsSequence() && n.size() == 2) return {list_item(key, n[0]), list_item(key, n[1])};
    return scalar<int64_t>(key, "an integer or [height, width]");
  }
  const YAML::Node& node(const std::string& key) { return given_.at(key); }
  const std::string& where() const { return where_; }

 private:
  // Every given argument is one of the layer's: else name it and the valid ones.
  void check_known() const {
    for (const auto& [key, value] : given_)
      if (std::find(valid_.begin(), valid_.end(), key) == valid_.end()) {
        std::string hint = closest_name(key, valid_);
        fail(fmt::format("unknown argument '{}'{}; {} takes: {}", key,
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), layer_,
                         valid_.empty() ? std::string("no arguments") : fmt::format("{}", fmt::join(valid_, ", "))));
      }
  }
  [[noreturn]] int64_t missing(const std::string& key) const {
    fail(fmt::format("missing argument '{}' (e.g. {{{}: ...}})", key, key));
  }
  template <class T>
  T scalar(const std::string& key, const char* expected) const {
    const YAML::Node& n = given_.at(key);
    try {
      if (n.IsScalar()) return n.as<T>();
    } catch (const YAML::Exception&) {
    }
    fail(fmt::format("argument '{}' expects {}, got '{}'", key, expected, YAML::Dump(n)));
  }
  int64_t list_item(const std::string& key, const YAML::Node& n) const {
    try {
      return n.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(fmt::format("argument '{}' expects integers, got '{}'", key, YAML::Dump(n)));
    }
  }
  std::string where_, layer_;
  std::map<std::string, YAML::Node> given_;
  std::vector<std::string> valid_;
};

// ---- the layers ----

// The running shape: a probe batch of 2 samples, pushed through each layer
// as it is built (eval mode, no grad), so every layer sees the real shape.
struct Walk {
  Tensor x;
  const DataInfo& info;
  size_t nodes = 0;
};

void require_dim(Args& a, const Tensor& x, int64_t dim, const char* layout) {
  if (x.dim() != dim)
    a.fail(fmt::format("expects input {} but the previous layer gives {} (batch first)", layout, shape_str(x.sizes())));
}

// An inferred size (in_channels, in_features, ...): given explicitly it must agree.
int64_t inferred(Args& a, const std::string& key, int64_t actual) {
  if (!a.has(key)) return actual;
  int64_t v = a.int_(key);
  if (v != actual)
    a.fail(fmt::format("{}={} does not match its input, which has {} (leave it out to infer it)", key, v, actual));
  return v;
}

struct LayerBuilder {
  std::function<nn::ModulePtr(Args&, Walk&)> build;
  std::vector<std::string> args;  // PyTorch's argument names, in its order
};
nn::ModulePtr build_layer(const YAML::Node& item, const std::string& where, Walk& w, int depth);
std::shared_ptr<SequentialModel> build_list(const YAML::Node& list, const std::string& where, Walk& w, int depth);

nn::ModulePtr conv2d(Args& a, Walk& w) {
  require_dim(a, w.x, 4, "[N, C, H, W]");
  int64_t in = inferred(a, "in_channels", w.x.size(1));
  int64_t out = a.int_("out_channels");
  auto k = a.pair("kernel_size");
  auto s = a.pair("stride", 1);
  nn::ConvPadding<2> p = 0;
  if (a.has("padding")) {
    const YAML::Node& n = a.node("padding");
    if (n.IsScalar() && (n.Scalar() == "same" || n.Scalar() == "valid")) p = nn::ConvPadding<2>(n.Scalar());
    else p.sizes = a.pair("padding");
  }
  auto d = a.pair("dilation", 1);
  int64_t groups = a.int_("groups", 1);
  bool bias = a.bool_("bias", true);
  std::string mode = a.choice("padding_mode", {"zeros", "reflect", "replicate", "circular"});
  return std::make_shared<nn::Conv2d>(in, out, k, s, p, d, groups, bias, mode);
}

template <class BN>
nn::ModulePtr batch_norm(Args& a, Walk& w, bool image) {
  if (image) require_dim(a, w.x, 4, "[N, C, H, W]");
  else if (w.x.dim() != 2 && w.x.dim() != 3) require_dim(a, w.x, 2, "[N, C] or [N, C, L]");
  int64_t c = inferred(a, "num_features", w.x.size(1));
  double eps = a.float_("eps", 1e-5);
  double momentum = a.float_("momentum", 0.1);
  bool affine = a.bool_("affine", true);
  bool track = a.bool_("track_running_stats", true);
  return std::make_shared<BN>(c, eps, momentum, affine, track);
}

template <class Pool>
nn::ModulePtr pool2d(Args& a, Walk& w) {
  require_dim(a, w.x, 4, "[N, C, H, W]");
  auto k = a.pair("kernel_size");
  std::optional<nn::ExpandingArray<2>> s;
  if (a.has("stride")) s = a.pair("stride");
  auto p = a.pair("padding", 0);
  return std::make_shared<Pool>(k, s, p);
}

nn::ModulePtr linear(Args& a, Walk& w) {
  if (w.x.dim() < 2) require_dim(a, w.x, 2, "[N, in_features]");
  int64_t in = inferred(a, "in_features", w.x.size(-1));
  return std::make_shared<nn::Linear>(in, a.int_("out_features"), a.bool_("bias", true));
}

nn::ModulePtr embedding(Args& a, Walk& w) {
  if (w.x.dtype() != kInt64)
    a.fail(fmt::format("expects token ids (int64, data.dataset=text), but its input is {} of {}",
                       shape_str(w.x.sizes()), to_string(w.x.dtype())));
  int64_t num = w.info.vocab_size > 0 ? inferred(a, "num_embeddings", w.info.vocab_size) : a.int_("num_embeddings");
  int64_t dim = a.int_("embedding_dim");
  std::optional<int64_t> pad;
  if (a.has("padding_idx")) pad = a.int_("padding_idx");
  else if (w.info.vocab_size > 0) pad = w.info.pad_index;
  return std::make_shared<nn::Embedding>(num, dim, pad);
}

template <class Rnn>
nn::ModulePtr recurrent(Args& a, Walk& w) {
  require_dim(a, w.x, 3, "[N, T, features] (e.g. after an embedding)");
  nn::RNNOptions o;
  int64_t in = inferred(a, "input_size", w.x.size(2));
  int64_t hidden = a.int_("hidden_size");
  o.num_layers = a.int_("num_layers", 1);
  o.bias = a.bool_("bias", true);
  o.dropout = a.float_("dropout", 0.0);
  o.bidirectional = a.bool_("bidirectional", false);
  if (a.has("batch_first") && !a.bool_("batch_first", true))
    a.fail("batch_first must be true: model.layers runs batch-first ([N, T, features])");
  o.batch_first = true;
  return std::make_shared<Recurrent<Rnn>>(in, hidden, o);
}

template <class M>
std::function<nn::ModulePtr(Args&, Walk&)> no_args() {
  return [](Args&, Walk&) -> nn::ModulePtr { return std::make_shared<M>(); };
}

const std::map<std::string, LayerBuilder>& layer_table() {
  using S = std::vector<std::string>;
  const S pool = {"kernel_size", "stride", "padding"};
  const S bn = {"num_features", "eps", "momentum", "affine", "track_running_stats"};
  const S rnn = {"input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional"};
  static const std::map<std::string, LayerBuilder> table = {
      {"conv2d",
       {conv2d, {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
                   "padding_mode"}}},
      {"batch_norm1d", {[](Args& a, Walk& w) { return batch_norm<nn::BatchNorm1d>(a, w, false); }, bn}},
      {"batch_norm2d", {[](Args& a, Walk& w) { return batch_norm<nn::BatchNorm2d>(a, w, true); }, bn}},
      {"max_pool2d", {pool2d<nn::MaxPool2d>, pool}},
      {"avg_pool2d", {pool2d<nn::AvgPool2d>, pool}},
      {"adaptive_avg_pool2d",
       {[](Args& a, Walk& w) -> nn::ModulePtr {
          require_dim(a, w.x, 4, "[N, C, H, W]");
          return std::make_shared<nn::AdaptiveAvgPool2d>(a.pair("output_size"));
        },
        {"output_size"}}},
      {"flatten",
       {[](Args& a, Walk&) -> nn::ModulePtr {
          return std::make_shared<nn::Flatten>(a.int_("start_dim", 1), a.int_("end_dim", -1));
        },
        {"start_dim", "end_dim"}}},
      {"linear", {linear, {"in_features", "out_features", "bias"}}},
      {"dropout",
       {[](Args& a, Walk&) -> nn::ModulePtr { return std::make_shared<nn::Dropout>(a.float_("p", 0.5)); }, {"p"}}},
      {"relu", {no_args<nn::ReLU>(), {}}},
      {"tanh", {no_args<nn::Tanh>(), {}}},
      {"sigmoid", {no_args<nn::Sigmoid>(), {}}},
      {"silu", {no_args<nn::SiLU>(), {}}},
      {"gelu", {no_args<nn::GELU>(), {}}},
      {"leaky_relu",
       {[](Args& a, Walk&) -> nn::ModulePtr {
          return std::make_shared<nn::LeakyReLU>(a.float_("negative_slope", 0.01));
        },
        {"negative_slope"}}},
      {"embedding", {embedding, {"num_embeddings", "embedding_dim", "padding_idx"}}},
      {"lstm", {recurrent<nn::LSTM>, rnn}},
      {"gru", {recurrent<nn::GRU>, rnn}},
  };
  return table;
}

// Runs the new layer on the probe; an error there is a shape that does not fit.
void advance(Walk& w, nn::Module& layer, const std::string& where, const std::string& name) {
  NoGradGuard no_grad;
  layer.eval();
  try {
    w.x = layer.forward(w.x);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(fmt::format("{} ({}): does not fit its input {} (batch first): {}", where, name,
                                  shape_str(w.x.sizes()), e.what()));
  }
  layer.train();
}

nn::ModulePtr residual(const YAML::Node& body, const std::string& where, Walk& w, int depth) {
  if (!body.IsSequence())
    throw ConfigError(fmt::format("{} (residual): expects a list of layers (- residual: [...]), got '{}'", where,
                                  YAML::Dump(body)));
  Tensor in = w.x;
  auto block = build_list(body, where + ".residual", w, depth + 1);
  if (w.x.sizes().vec() != in.sizes().vec())
    throw ConfigError(fmt::format("{} (residual): its layers map {} to {}; x + f(x) needs the same shape", where,
                                  shape_str(in.sizes()), shape_str(w.x.sizes())));
  w.x = in;  // advance() runs the block again, as a whole
  return std::make_shared<Residual>(block);
}

nn::ModulePtr build_layer(const YAML::Node& item, const std::string& where, Walk& w, int depth) {
  if (++w.nodes > kMaxConfigNodes || depth > kMaxConfigDepth)
    throw ConfigError(fmt::format("{}: model.layers is larger than {} layers or nests deeper than {}", where,
                                  kMaxConfigNodes, kMaxConfigDepth));
  std::string name;
  YAML::Node args;
  if (item.IsScalar()) name = item.Scalar();
  else if (item.IsMap() && item.size() == 1) name = item.begin()->first.as<std::string>(), args = item.begin()->second;
  else
    throw ConfigError(fmt::format("{}: a layer is a name ('- relu') or one 'name: {{arguments}}' mapping ('- linear: "
                                  "{{out_features: 10}}'), got '{}'", where, YAML::Dump(item)));
  nn::ModulePtr layer;
  if (name == "residual") {
    layer = residual(args, where, w, depth);
  } else {
    auto it = layer_table().find(name);
    if (it == layer_table().end()) {
      std::vector<std::string> names = sequential_layer_names();
      std::string hint = closest_name(name, names);
      throw ConfigError(fmt::format("{}: unknown layer '{}'{}; the layers are: {}", where, name,
                                    hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                                    fmt::join(names, ", ")));
    }
    Args a(where, name, it->second.args, args);
    try {
      layer = it->second.build(a, w);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      a.fail(e.what());  // a bad value the module itself refused (e.g. p=1.5)
    }
  }
  advance(w, *layer, where, name);
  return layer;
}

std::shared_ptr<SequentialModel> build_list(const YAML::Node& list, const std::string& where, Walk& w, int depth) {
  auto model = std::make_shared<SequentialModel>();
  for (size_t i = 0; i < list.size(); ++i)
    model->push_back(build_layer(list[i], fmt::format("{}[{}]", where, i), w, depth));
  return model;
}

}  // namespace

// ---- SequentialModel ----

SequentialModel::SequentialModel() : SampleModule("Sequential") {}

void SequentialModel::push_back(nn::ModulePtr layer) {
  register_module(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
}

Tensor SequentialModel::forward(const Tensor& input) { return forward(input, Tensor()); }

Tensor SequentialModel::forward(const Tensor& input, const Tensor& lengths) {
  Tensor x = input;
  for (const nn::ModulePtr& layer : layers_) {
    auto* rnn = lengths.defined() ? dynamic_cast<LengthsAware*>(layer.get()) : nullptr;
    x = rnn ? rnn->forward_lengths(x, lengths) : layer->forward(x);
  }
  return x;
}

Tensor SequentialModel::forward_sample(const data::Sample& input) {
  if (input.is_tensor()) return forward(input.tensor());
  EMBER_CHECK(input.is_tuple() && input.size() == 2 && input[0].is_tensor() && input[1].is_tensor(),
              "Sequential: expected a tensor or (token ids [B, T], lengths [B]), got {}", input.describe());
  return forward(input[0].tensor(), input[1].tensor());
}

std::vector<std::string> sequential_layer_names() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : layer_table()) names.push_back(name);
  names.push_back("residual");
  return names;
}

std::shared_ptr<SequentialModel> build_sequential(const std::string& layers_yaml, const DataInfo& info) {
  if (layers_yaml.size() > kMaxConfigBytes)
    throw ConfigError(fmt::format("model.layers: {} bytes is too large (at most {})", layers_yaml.size(),
                                  kMaxConfigBytes));
  YAML::Node list;
  try {
    list = YAML::Load(layers_yaml);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("model.layers: malformed YAML: {}", e.msg));
  }
  if (!list.IsSequence() || list.size() == 0)
    throw ConfigError("model.layers: model.name=sequential needs a list of layers, e.g. model.layers: [{linear: "
                      "{out_features: 10}}]");
  // The probe: 2 samples of the data's shape (token ids for text data).
  Tensor probe = info.vocab_size > 0 ? zeros({2, 3}, TensorOptions().dtype(kInt64))
                                     : zeros([&] {
                                         std::vector<int64_t> s{2};
                                         s.insert(s.end(), info.input_shape.begin(), info.input_shape.end());
                                         return s;
                                       }());
  Walk w{probe, info};
  auto model = build_list(list, "model.layers", w, 1);
  std::vector<int64_t> want{2, info.num_classes};
  if (w.x.sizes().vec() != want)
    throw ConfigError(fmt::format("model.layers: the last layer gives {} per batch of 2, but the data needs {} "
                                  "({} outputs per sample); end with '- linear: {{out_features: {}}}'",
                                  shape_str(w.x.sizes()), shape_str(want), info.num_classes, info.num_classes));
  return model;
}

}  // namespace ember::train

// TransformerEncoderLayer and TransformerEncoder.
#include "ember/nn/transformer.h"

#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"

namespace ember::nn {

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model_, int64_t nhead_, int64_t dim_feedforward_,
                                                 double dropout_, std::string activation_, double layer_norm_eps_,
                                                 bool batch_first_, bool norm_first_, ScalarType dtype, Generator* gen)
    : Module("TransformerEncoderLayer"),
      d_model(d_model_),
      nhead(nhead_),
      dim_feedforward(dim_feedforward_),
      dropout_p(dropout_),
      layer_norm_eps(layer_norm_eps_),
      activation(std::move(activation_)),
      batch_first(batch_first_),
      norm_first(norm_first_),
      generator(gen) {
  EMBER_CHECK(activation == "relu" || activation == "gelu",
              "TransformerEncoderLayer: expected activation \"relu\" or \"gelu\", got \"{}\"", activation);
  // Registration order fixes state_dict order, as in PyTorch's __init__.
  self_attn = register_module(
      "self_attn", std::make_shared<MultiheadAttention>(d_model, nhead, dropout_p, true, batch_first, dtype, gen));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward, true, dtype));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p, gen));
  linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model, true, dtype));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true,
                                                               dtype));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true,
                                                               dtype));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p, gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p, gen));
}

Tensor TransformerEncoderLayer::sa_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask) {
  AttentionOptions o;
  o.key_padding_mask = key_padding_mask;
  o.need_weights = false;
  o.attn_mask = mask;
  return dropout1->forward(self_attn->forward(x, x, x, o).first);
}

Tensor TransformerEncoderLayer::ff_block(const Tensor& x) {
  Tensor h = linear1->forward(x);
  h = activation == "gelu" ? gelu(h) : relu(h);
  return dropout2->forward(linear2->forward(dropout->forward(h)));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask) {
  EMBER_CHECK((src.dim() == 3 || src.dim() == 2) && src.size(-1) == d_model,
              "TransformerEncoderLayer: expected src of shape [{}, d_model={}] (or unbatched [S, {}]), got [{}]",
              batch_first ? "N, S" : "S, N", d_model, d_model, fmt::join(src.sizes().vec(), ", "));
  Tensor x = src;
  if (norm_first) {
    x = x + sa_block(norm1->forward(x), src_mask, src_key_padding_mask);
    x = x + ff_block(norm2->forward(x));
  } else {
    x = norm1->forward(x + sa_block(x, src_mask, src_key_padding_mask));
    x = norm2->forward(x + ff_block(x));
  }
  return x;
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoderLayer::clone() const {
  auto copy = std::make_shared<TransformerEncoderLayer>(d_model, nhead, dim_feedforward, dropout_p, activation,
                                                        layer_norm_eps, batch_first, norm_first,
                                                        self_attn->in_proj_weight.scalar_type(), generator);
  // Same registration order on both sides, so the lists pair up.
  NamedTensors src = named_parameters(), dst = copy->named_parameters();
  EMBER_ASSERT(src.size() == dst.size(), "TransformerEncoderLayer::clone: parameter lists differ");
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < src.size(); ++i) {
      Tensor& d = dst[i].second;
      copy_(d, src[i].second);
      d.requires_grad_(src[i].second.requires_grad());
    }
  }
  copy->train(is_training());
  return copy;
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer, int64_t num_layers_,
                                       ModulePtr norm_)
    : Module("TransformerEncoder"), num_layers(num_layers_), norm(std::move(norm_)) {
  EMBER_CHECK(num_layers > 0, "TransformerEncoder: expected num_layers > 0, got {}", num_layers);
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(encoder_layer.clone());
  if (norm) register_module("norm", norm);
}

Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (const ModulePtr& m : *layers) {
    auto* layer = dynamic_cast<TransformerEncoderLayer*>(m.get());
    EMBER_CHECK(layer != nullptr, "TransformerEncoder: expected every entry of layers to be a "
                                  "TransformerEncoderLayer, got {}", m->type_name());
    x = layer->forward(x, mask, src_key_padding_mask);
  }
  return norm ? norm->forward(x) : x;
}

Tensor generate_square_subsequent_mask(int64_t sz, ScalarType dtype) {
  return masked_fill(zeros({sz, sz}, dtype), causal_mask(sz, sz), -std::numeric_limits<double>::infinity());
}

}  // namespace ember::nn

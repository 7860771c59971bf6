// Transformer encoder: TransformerEncoderLayer and a stack of them
// (torch.nn.TransformerEncoderLayer / TransformerEncoder).
#pragma once

#include <memory>
#include <string>

#include "ember/core/generator.h"
#include "ember/nn/attention.h"
#include "ember/nn/container.h"
#include "ember/nn/dropout.h"
#include "ember/nn/linear.h"
#include "ember/nn/normalization.h"

namespace ember::nn {

// Self-attention then a feed-forward block (linear1 -> activation -> dropout
// -> linear2), each with dropout and a residual connection; LayerNorm after
// each residual (post-norm, the default) or before each block (norm_first).
// activation: "relu" or "gelu". Submodules carry PyTorch's names (self_attn,
// linear1, dropout, linear2, norm1, norm2, dropout1, dropout2), so
// state_dict keys match. Always the composite path: torch's eval-only fused
// fast path computes the same function.
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048, double dropout = 0.1,
                          std::string activation = "relu", double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = false, ScalarType dtype = kFloat32, Generator* gen = nullptr);

  // src [S, N, E] ([N, S, E] when batch_first, [S, E] unbatched); masks as
  // in MultiheadAttention (Note [attention masks]).
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = Tensor());
  Tensor operator()(const Tensor& src, const Tensor& src_mask = Tensor(),
                    const Tensor& src_key_padding_mask = Tensor()) {
    return forward(src, src_mask, src_key_padding_mask);
  }

  // A deep copy: same configuration, parameter values, requires_grad flags
  // and mode, but its own tensors (what TransformerEncoder stacks).
  std::shared_ptr<TransformerEncoderLayer> clone() const;

  const int64_t d_model, nhead, dim_feedforward;
  const double dropout_p, layer_norm_eps;
  const std::string activation;
  const bool batch_first, norm_first;
  Generator* generator;

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;

 private:
  Tensor sa_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask);
  Tensor ff_block(const Tensor& x);
};

// num_layers deep copies of encoder_layer (layers.0, layers.1, ...) applied
// in turn, then the optional final norm (any single-tensor module; PyTorch
// stores None and prints nothing when it is absent).
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerEncoderLayer& encoder_layer, int64_t num_layers, ModulePtr norm = nullptr);

  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask = Tensor());
  Tensor operator()(const Tensor& src, const Tensor& mask = Tensor(), const Tensor& src_key_padding_mask = Tensor()) {
    return forward(src, mask, src_key_padding_mask);
  }

  const int64_t num_layers;
  std::shared_ptr<ModuleList> layers;
  ModulePtr norm;  // null when absent
};

// The float [sz, sz] mask with -inf above the diagonal and 0 elsewhere
// (nn.Transformer.generate_square_subsequent_mask), for attn_mask / mask.
Tensor generate_square_subsequent_mask(int64_t sz, ScalarType dtype = kFloat32);

}  // namespace ember::nn

// Multi-head scaled dot-product attention (torch.nn.MultiheadAttention).
#pragma once

#include <utility>

#include "ember/core/generator.h"
#include "ember/nn/module.h"

namespace ember::nn {

// The output projection of MultiheadAttention. PyTorch gives it its own
// class name (it exists only to keep the quantisation passes away), and that
// name shows in repr(); the layer itself is Linear: same init, same forward.
class NonDynamicallyQuantizableLinear : public Module {
 public:
  NonDynamicallyQuantizableLinear(int64_t in_features, int64_t out_features, bool bias = true,
                                  ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_features, out_features;
  Tensor& weight;
  Tensor& bias;  // undefined when bias = false
};

// The keyword arguments of MultiheadAttention::forward, so calls read like
// PyTorch's: mha.forward(q, k, v, {.key_padding_mask = pad, .need_weights = false}).
struct AttentionOptions {
  // [N, S] ([S] for unbatched input). bool: true marks a key to ignore;
  // floating: added to the scores.
  Tensor key_padding_mask;
  // Return the attention weights (after dropout, like PyTorch).
  bool need_weights = true;
  // [L, S] (shared by every batch entry and head) or [N * num_heads, L, S].
  // bool: true = may not attend; floating: added to the scores.
  Tensor attn_mask;
  // Weights averaged over heads [N, L, S], or per head [N, num_heads, L, S].
  bool average_attn_weights = true;
  // When attn_mask is undefined, build the causal mask (query i attends to
  // keys 0..i) — a helper, so callers need not build the mask themselves.
  // With attn_mask given, attn_mask is used as is (PyTorch 2's hint).
  bool is_causal = false;
};

// Note [attention masks]
// Masks follow torch 1.13's multi_head_attention_forward exactly: the
// key_padding_mask is expanded to [N * num_heads, 1, S] and merged with
// attn_mask (logical_or for a bool attn_mask, masked_fill(-inf) into a float
// one); bool masks become -inf in the scores, float masks are added. A query
// whose every key is masked therefore softmaxes a row of -inf and gets NaN
// weights and a NaN output, as in PyTorch 1.13 (PyTorch 2's fast path
// returns zeros there instead). Mask such rows yourself, e.g. with
// nan_to_num or masked_fill on the output, if padded queries can occur.
//
// Shapes: query [L, N, E], key/value [S, N, E] ([N, L, E] / [N, S, E] when
// batch_first; [L, E] / [S, E] unbatched). Heads are folded into the batch:
// scores = bmm(q / sqrt(head_dim), k^T) over [N * num_heads, L, S], so
// everything is plain differentiable ops and autograd comes for free.
//
// Parameters (PyTorch's names, shapes and init): in_proj_weight [3E, E]
// (xavier_uniform_), in_proj_bias [3E] (zeros), out_proj.weight [E, E]
// (Linear's init), out_proj.bias [E] (zeros). Only kdim = vdim = embed_dim
// is supported (packed in_proj_weight), without add_bias_kv/add_zero_attn;
// note batch_first is the 5th constructor argument here (PyTorch puts
// add_bias_kv, add_zero_attn, kdim, vdim before it).
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false, ScalarType dtype = kFloat32, Generator* gen = nullptr);

  // (attn_output, attn_weights); attn_weights is undefined unless
  // need_weights. The single-tensor forward of the base class raises.
  using Module::forward;
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionOptions& options = {});
  std::pair<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const AttentionOptions& options = {}) {
    return forward(query, key, value, options);
  }
  void reset_parameters();

  const int64_t embed_dim, num_heads, head_dim;
  const double dropout;
  const bool batch_first;
  Generator* generator;  // attention-weight dropout draws (default generator when null)
  Tensor& in_proj_weight;
  Tensor& in_proj_bias;  // undefined when bias = false
  std::shared_ptr<NonDynamicallyQuantizableLinear> out_proj;
};

// The [L, S] bool mask that is true above the diagonal (key j > query i):
// what AttentionOptions::is_causal builds.
Tensor causal_mask(int64_t target_len, int64_t source_len);

}  // namespace ember::nn

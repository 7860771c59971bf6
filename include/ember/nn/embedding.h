// Embedding and EmbeddingBag: lookup tables of vectors indexed by integer ids.
#pragma once

#include <optional>

#include "ember/nn/module.h"

namespace ember::nn {

// weight [num_embeddings, embedding_dim] ~ N(0, 1); the padding_idx row
// (negative counts from the end) starts at zero and never gets a gradient.
// max_norm, norm_type, scale_grad_by_freq and sparse as in F.embedding
// (ember/ops/activation.h): rows renormalised in place on lookup, gradients
// scaled by inverse frequency, sparse refused.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt,
            std::optional<double> max_norm = std::nullopt, double norm_type = 2.0, bool scale_grad_by_freq = false,
            bool sparse = false, ScalarType dtype = kFloat32);
  // Wraps an existing [num_embeddings, dim] table; freeze stops its gradient.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& embeddings, bool freeze = true,
                                                    std::optional<int64_t> padding_idx = std::nullopt,
                                                    std::optional<double> max_norm = std::nullopt,
                                                    double norm_type = 2.0, bool scale_grad_by_freq = false,
                                                    bool sparse = false);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_embeddings, embedding_dim;
  const std::optional<int64_t> padding_idx;  // wrapped to [0, num_embeddings)
  const std::optional<double> max_norm;
  const double norm_type;
  const bool scale_grad_by_freq, sparse;
  Tensor& weight;
};

// Sums, means or maxes of bags of embeddings (F.embedding_bag); weight
// [num_embeddings, embedding_dim] ~ N(0, 1), the padding_idx row zero.
// max_norm, scale_grad_by_freq and sparse are not supported.
class EmbeddingBag : public Module {
 public:
  EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, std::string mode = "mean",
               bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt,
               ScalarType dtype = kFloat32);
  // input (B, N), or 1-D with offsets [B] (B + 1 with include_last_offset).
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights = Tensor());
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_embeddings, embedding_dim;
  const std::string mode;
  const bool include_last_offset;
  const std::optional<int64_t> padding_idx;  // wrapped to [0, num_embeddings)
  Tensor& weight;
};

}  // namespace ember::nn

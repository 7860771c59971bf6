// Embedding and EmbeddingBag.
#include "ember/nn/embedding.h"

#include "ember/core/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/ops/activation.h"
#include "ember/ops/factory.h"
#include "ember/ops/nn_functional.h"

namespace ember::nn {

namespace {
std::optional<int64_t> wrap_padding(std::optional<int64_t> idx, int64_t n) {
  if (!idx) return idx;
  EMBER_CHECK(*idx < n && *idx >= -n, "Embedding: padding_idx must be within num_embeddings ({}), got {}", n, *idx);
  return *idx < 0 ? *idx + n : *idx;
}
}  // namespace

Embedding::Embedding(int64_t n, int64_t dim, std::optional<int64_t> pad, std::optional<double> max_norm_,
                     double norm_type_, bool scale_grad_by_freq_, bool sparse_, ScalarType dtype)
    : Module("Embedding"),
      num_embeddings(n),
      embedding_dim(dim),
      padding_idx(wrap_padding(pad, n)),
      max_norm(max_norm_),
      norm_type(norm_type_),
      scale_grad_by_freq(scale_grad_by_freq_),
      sparse(sparse_),
      weight(register_parameter("weight", empty({n, dim}, dtype))) {
  EMBER_CHECK(!sparse, "Embedding: sparse=true is not supported (Ember has no sparse tensors); sparse=false gives "
                       "the same update as a dense gradient");
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard g;
    weight.select(0, *padding_idx).zero_();
  }
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<int64_t> padding_idx,
                                                      std::optional<double> max_norm, double norm_type,
                                                      bool scale_grad_by_freq, bool sparse) {
  EMBER_CHECK(embeddings.dim() == 2, "Embedding.from_pretrained: expected a 2-D table, got shape [{}]",
              fmt::join(embeddings.sizes().vec(), ", "));
  auto m = std::make_shared<Embedding>(embeddings.size(0), embeddings.size(1), padding_idx, max_norm, norm_type,
                                       scale_grad_by_freq, sparse, embeddings.dtype());
  NoGradGuard g;
  m->weight.copy_(embeddings);
  m->weight.requires_grad_(!freeze);
  return m;
}

Tensor Embedding::forward(const Tensor& indices) {
  return embedding(indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse);
}

std::string Embedding::extra_repr() const {
  std::string s = fmt::format("{}, {}", num_embeddings, embedding_dim);
  if (padding_idx) s += fmt::format(", padding_idx={}", *padding_idx);
  if (max_norm) s += ", max_norm=" + py_float(*max_norm);
  if (norm_type != 2.0) s += ", norm_type=" + py_float(norm_type);
  if (scale_grad_by_freq) s += ", scale_grad_by_freq=True";
  return s;
}

EmbeddingBag::EmbeddingBag(int64_t n, int64_t dim, std::string mode_, bool include_last, std::optional<int64_t> pad,
                           ScalarType dtype)
    : Module("EmbeddingBag"),
      num_embeddings(n),
      embedding_dim(dim),
      mode(std::move(mode_)),
      include_last_offset(include_last),
      padding_idx(wrap_padding(pad, n)),
      weight(register_parameter("weight", empty({n, dim}, dtype))) {
  EMBER_CHECK(mode == "sum" || mode == "mean" || mode == "max", "EmbeddingBag: mode has to be one of sum, mean or max, "
              "got '{}'", mode);
  reset_parameters();
}

void EmbeddingBag::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard g;
    weight.select(0, *padding_idx).zero_();
  }
}

Tensor EmbeddingBag::forward(const Tensor& input) { return forward(input, Tensor()); }

Tensor EmbeddingBag::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  EmbeddingBagOptions o;
  o.offsets = offsets;
  o.mode = mode;
  o.per_sample_weights = per_sample_weights;
  o.include_last_offset = include_last_offset;
  o.padding_idx = padding_idx;
  return embedding_bag(input, weight, o);
}

std::string EmbeddingBag::extra_repr() const {
  std::string s = fmt::format("{}, {}, mode={}", num_embeddings, embedding_dim, mode);
  if (padding_idx) s += fmt::format(", padding_idx={}", *padding_idx);
  return s;
}

}  // namespace ember::nn

// torch.nn.functional.scaled_dot_product_attention (PyTorch 2's math path).
#pragma once

#include <optional>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

// query [*, L, E], key [*, S, E], value [*, S, Ev] -> [*, L, Ev]:
// softmax(q k^T * scale + mask) v with scale = 1 / sqrt(E) by default.
// attn_mask [L, S] or broadcastable to [*, L, S]: bool (true = may attend,
// PyTorch 2's convention) or floating (added to the scores). is_causal: query
// i attends to keys 0..i (no attn_mask then). dropout_p drops attention
// weights (always, like the functional; pass 0 in eval).
//
// Training in float32 on long sequences takes a blocked, flash-style kernel
// (Note [blocked attention] in src/ops/attention.cpp): no [*, L, S] matrix is
// kept for the backward. It recomputes the probabilities there, so it is
// slower than the composite (measured 1.3x at [8, 2048, 2048]) and runs only
// where the matrix is large: attention_runs_blocked.
constexpr int64_t kAttentionTile = 256;
constexpr int64_t kAttentionBlockedMinScores = int64_t{1} << 24;  // 64 MiB of float32 scores
inline bool attention_runs_blocked(int64_t batch, int64_t L, int64_t S) {
  return S > kAttentionTile && batch * L * S >= kAttentionBlockedMinScores;
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, Generator* gen = nullptr);

}  // namespace ember

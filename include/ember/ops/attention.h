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
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, Generator* gen = nullptr);

}  // namespace ember

// The blocked attention kernel without scaled_dot_product_attention's choice
// of path (attention_runs_blocked), for tests that reach it on small shapes.
#pragma once

#include <optional>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember::detail {

// Note [blocked attention]: float32 query [*, L, E], key [*, S, E], value
// [*, S, Ev] with the same batch dims; attn_mask (bool or float32, needing no
// gradient) broadcastable to [*, L, S]; dropout_p < 1. Records a gradient
// node when an input requires grad.
Tensor scaled_dot_product_attention_blocked(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& attn_mask, double dropout_p, bool is_causal,
                                            std::optional<double> scale, Generator* gen);

}  // namespace ember::detail

// scaled_dot_product_attention as a composite of matmul, softmax and dropout.
#include "ember/ops/attention.h"

#include <cmath>
#include <limits>

#include "ops/op_util.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/reduction.h"

namespace ember {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, Generator* gen) {
  const char* op = "scaled_dot_product_attention";
  EMBER_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2,
              "{}: expected query [*, L, E], key [*, S, E], value [*, S, Ev], got {}, {} and {}", op,
              shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  EMBER_CHECK(query.size(-1) == key.size(-1) && key.size(-2) == value.size(-2),
              "{}: expected query [*, L, E], key [*, S, E], value [*, S, Ev], got {}, {} and {}", op,
              shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  EMBER_CHECK_TYPE(query.is_floating_point() && key.dtype() == query.dtype() && value.dtype() == query.dtype(),
                   "{}: expected query, key and value of the same floating-point dtype, got {}, {} and {}", op,
                   to_string(query.dtype()), to_string(key.dtype()), to_string(value.dtype()));
  EMBER_CHECK(!(is_causal && attn_mask.defined()),
              "{}: Explicit attn_mask should not be set when is_causal=True", op);
  EMBER_CHECK(dropout_p >= 0 && dropout_p <= 1, "{}: dropout_p must be in [0, 1], got {}", op, dropout_p);
  int64_t l = query.size(-2), s = key.size(-2);
  double sc = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = matmul(query, key.transpose(-2, -1)) * sc;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    Tensor keep = tril(ones({l, s}, TensorOptions(kBool)));
    scores = masked_fill(scores, logical_not(keep), neg_inf);
  } else if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool)
      scores = masked_fill(scores, logical_not(attn_mask), neg_inf);
    else
      scores = scores + attn_mask;
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = dropout(weights, dropout_p, true, gen);
  return matmul(weights, value);
}

}  // namespace ember

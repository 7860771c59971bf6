// MultiheadAttention and its output projection.
#include "ember/nn/attention.h"

#include "ember/ops/attention.h"

#include <cmath>
#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ember/ops/reduction.h"

namespace ember::nn {

namespace {

std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

void check_mask_dtype(const Tensor& mask, const char* what) {
  EMBER_CHECK(mask.dtype() == kBool || mask.is_floating_point(),
              "MultiheadAttention: expected {} to be bool (true = masked) or floating (added), got dtype {}", what,
              to_string(mask.dtype()));
}

}  // namespace

NonDynamicallyQuantizableLinear::NonDynamicallyQuantizableLinear(int64_t in, int64_t out, bool has_bias,
                                                                 ScalarType dtype)
    : Module("NonDynamicallyQuantizableLinear"),
      in_features(in),
      out_features(out),
      weight(register_parameter("weight", empty({out, in}, dtype))),
      bias(register_parameter("bias", has_bias ? empty({out}, dtype) : Tensor())) {
  reset_parameters();
}

void NonDynamicallyQuantizableLinear::reset_parameters() {
  // Linear's init, draw for draw.
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor NonDynamicallyQuantizableLinear::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 1 && input.size(-1) == in_features,
              "NonDynamicallyQuantizableLinear: expected input with last dim in_features={}, got shape {}",
              in_features, shape_of(input));
  return linear(input, weight, opt(bias));
}

std::string NonDynamicallyQuantizableLinear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features, py_bool(bias.defined()));
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_, bool bias,
                                       bool batch_first_, ScalarType dtype, Generator* gen)
    : Module("MultiheadAttention"),
      embed_dim(embed_dim_),
      num_heads(num_heads_),
      head_dim(num_heads_ > 0 ? embed_dim_ / num_heads_ : 0),
      dropout(dropout_),
      batch_first(batch_first_),
      generator(gen),
      in_proj_weight(register_parameter("in_proj_weight", empty({3 * embed_dim_, embed_dim_}, dtype))),
      in_proj_bias(register_parameter("in_proj_bias", bias ? empty({3 * embed_dim_}, dtype) : Tensor())) {
  EMBER_CHECK(embed_dim > 0 && num_heads > 0 && head_dim * num_heads == embed_dim,
              "MultiheadAttention: expected embed_dim divisible by num_heads (both positive), got embed_dim={} and "
              "num_heads={}",
              embed_dim, num_heads);
  EMBER_CHECK(dropout >= 0 && dropout <= 1,
              "MultiheadAttention: dropout probability has to be between 0 and 1, but got {}", dropout);
  out_proj = register_module("out_proj",
                             std::make_shared<NonDynamicallyQuantizableLinear>(embed_dim, embed_dim, bias, dtype));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

Tensor causal_mask(int64_t target_len, int64_t source_len) {
  Tensor i = arange(target_len).unsqueeze(1);
  Tensor j = arange(source_len).unsqueeze(0);
  return gt(j, i);
}

std::pair<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                      const AttentionOptions& o) {
  // ---- shapes: everything becomes sequence-first [L, N, E] ----
  const bool batched = query.dim() == 3;
  EMBER_CHECK((query.dim() == 3 || query.dim() == 2) && key.dim() == query.dim() && value.dim() == query.dim(),
              "MultiheadAttention: expected query, key and value all 3-D (batched) or all 2-D (unbatched), got "
              "query {}, key {}, value {}",
              shape_of(query), shape_of(key), shape_of(value));
  EMBER_CHECK(key.sizes().vec() == value.sizes().vec(),
              "MultiheadAttention: expected key and value of the same shape, got {} and {}", shape_of(key),
              shape_of(value));
  EMBER_CHECK(query.size(-1) == embed_dim && key.size(-1) == embed_dim,
              "MultiheadAttention: expected embedding dim embed_dim={} in query, key and value, got query {} and "
              "key {}",
              embed_dim, shape_of(query), shape_of(key));
  const bool self_attention = query.is_same(key) && key.is_same(value);
  auto seq_first = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(1);
    return batch_first ? t.transpose(0, 1) : t;
  };
  Tensor q_in = seq_first(query), k_in = seq_first(key), v_in = seq_first(value);
  const int64_t L = q_in.size(0), N = q_in.size(1), S = k_in.size(0), E = embed_dim, H = num_heads;
  EMBER_CHECK(k_in.size(1) == N, "MultiheadAttention: expected query and key with the same batch size, got {} and {}",
              shape_of(query), shape_of(key));

  // ---- in-projection: one GEMM when q, k, v are the same tensor ----
  Tensor q, k, v;
  if (self_attention) {
    Tensor proj = linear(q_in, in_proj_weight, opt(in_proj_bias));  // [L, N, 3E]
    q = proj.narrow(-1, 0, E);
    k = proj.narrow(-1, E, E);
    v = proj.narrow(-1, 2 * E, E);
  } else {
    auto project = [&](const Tensor& x, int64_t i) {
      Tensor b = in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor();
      return linear(x, in_proj_weight.narrow(0, i * E, E), opt(b));
    };
    q = project(q_in, 0);
    k = project(k_in, 1);
    v = project(v_in, 2);
  }
  // [T, N, E] -> [N * H, T, head_dim]: heads folded into the batch.
  auto heads = [&](const Tensor& t, int64_t len) { return t.reshape({len, N * H, head_dim}).transpose(0, 1); };
  q = heads(q, L);
  k = heads(k, S);
  v = heads(v, S);

  // ---- masks (Note [attention masks]) ----
  Tensor mask = o.attn_mask;
  if (!mask.defined() && o.is_causal) mask = causal_mask(L, S);
  if (mask.defined()) {
    check_mask_dtype(mask, "attn_mask");
    if (mask.dim() == 2) {
      EMBER_CHECK(mask.size(0) == L && mask.size(1) == S,
                  "MultiheadAttention: expected a 2-D attn_mask of shape [L, S] = [{}, {}], got {}", L, S,
                  shape_of(mask));
      mask = mask.unsqueeze(0);
    } else {
      EMBER_CHECK(mask.dim() == 3 && mask.size(0) == N * H && mask.size(1) == L && mask.size(2) == S,
                  "MultiheadAttention: expected attn_mask of shape [L, S] = [{}, {}] or [N * num_heads, L, S] = [{}, "
                  "{}, {}], got {}",
                  L, S, N * H, L, S, shape_of(mask));
    }
  }
  if (o.key_padding_mask.defined()) {
    Tensor kpm = o.key_padding_mask;
    check_mask_dtype(kpm, "key_padding_mask");
    if (!batched && kpm.dim() == 1) kpm = kpm.unsqueeze(0);
    EMBER_CHECK(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S,
                "MultiheadAttention: expected key_padding_mask of shape [N, S] = [{}, {}], got {}", N, S,
                shape_of(o.key_padding_mask));
    kpm = kpm.view({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    if (!mask.defined()) {
      mask = kpm;
    } else if (mask.dtype() == kBool && kpm.dtype() == kBool) {
      mask = logical_or(mask, kpm);
    } else if (kpm.dtype() == kBool) {
      mask = masked_fill(mask.expand({N * H, L, S}), kpm, -std::numeric_limits<double>::infinity());
    } else {
      Tensor as_float = mask.dtype() == kBool
                            ? masked_fill(zeros(mask.sizes(), kpm.dtype()), mask, -std::numeric_limits<double>::infinity())
                            : mask;
      mask = as_float + kpm;
    }
  }

  // ---- scaled dot-product attention over [N * H, L, S] ----
  Tensor ctx, attn;  // ctx [N * H, L, head_dim]; attn the weights, when computed
  if (!o.need_weights && attention_runs_blocked(N * H, L, S) && GradMode::is_enabled() &&
      (q.requires_grad() || k.requires_grad() || v.requires_grad())) {
    // Training on long sequences: the blocked kernel (Note [blocked
    // attention]) keeps no [L, S] probabilities for the backward. Its bool
    // masks say where to attend.
    Tensor attend = mask.defined() && mask.dtype() == kBool ? logical_not(mask) : mask;
    ctx = scaled_dot_product_attention(q, k, v, attend, is_training() ? dropout : 0.0, false, std::nullopt,
                                       generator);
  } else {
    Tensor scores = bmm(q / std::sqrt(static_cast<double>(head_dim)), k.transpose(1, 2));
    if (mask.defined()) {
      if (mask.dtype() == kBool) {
        scores = masked_fill(scores, mask, -std::numeric_limits<double>::infinity());
      } else {
        scores = scores + mask;
      }
    }
    attn = softmax(scores, -1);
    if (dropout > 0.0) attn = ember::dropout(attn, dropout, is_training(), generator);
    ctx = bmm(attn, v);
  }
  Tensor out = ctx.transpose(0, 1).reshape({L * N, E});  // [L, N * H, head_dim] -> [L * N, E]
  out = out_proj->forward(out).view({L, N, E});

  Tensor weights;
  if (o.need_weights) {
    weights = attn.view({N, H, L, S});
    if (o.average_attn_weights) weights = sum(weights, {1}) / static_cast<double>(H);
  }
  if (!batched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  } else if (batch_first) {
    out = out.transpose(0, 1);
  }
  return {out, weights};
}

}  // namespace ember::nn

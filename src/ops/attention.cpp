// scaled_dot_product_attention: a blocked, flash-style kernel for float32
// (Note [blocked attention]) and the composite of matmul, softmax and
// dropout for everything else.
#include "ember/ops/attention.h"

#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "ops/op_util.h"
#include "ember/core/grad_graph.h"
#include "ember/core/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/core/trace_hook.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/cpu/philox_vec.h"
#include "ops/attention_internal.h"
#include "ops/random_internal.h"

namespace ember {
namespace {

Tensor sdpa_composite(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                      double dropout_p, bool is_causal, double sc, Generator* gen) {
  int64_t l = query.size(-2), s = key.size(-2);
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


// Note [blocked attention]: the scores are computed a tile of kBlock query
// rows by kBlock key columns at a time, with the online softmax (a running
// row max m and sum l; each new tile rescales what came before by exp(m_old -
// m_new)), so no [L, S] matrix is ever held for long sequences: memory is
// O(batch * kBlock^2) besides the inputs and the output. The backward
// recomputes each tile's probabilities from the saved row logsumexp. Dropout
// keeps the composite's random numbers: weight (b, i, j) draws Philox block
// base + (b * L + i) * S + j, as bernoulli_ over the [B, L, S] weights would,
// and the backward draws the same blocks again instead of saving a mask.
// Each tile is a batched matmul (oneDNN) over all B = batch * heads at once.
constexpr int64_t kBlock = kAttentionTile;

struct Tiles {
  int64_t B, L, S, E, Ev;
  double scale;
  bool causal;
  Tensor mask;  // [B, L, S] (an expanded view) or undefined; bool: true = attend
  double dropout_p;
  uint64_t seed, base;
  detail::DropoutKeep keep;  // from dropout_p, when above 0
};

// The scores of query rows [i0, i0 + bq) against keys [j0, j0 + bk), masked.
Tensor tile_scores(const Tiles& t, const Tensor& q, const Tensor& k, int64_t i0, int64_t bq, int64_t j0, int64_t bk) {
  Tensor s = matmul(q.narrow(1, i0, bq), k.narrow(1, j0, bk).transpose(1, 2)) * t.scale;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (t.causal) {
    Tensor later = gt(arange(j0, j0 + bk).view({1, 1, bk}), arange(i0, i0 + bq).view({1, bq, 1}));
    s = masked_fill(s, later, neg_inf);
  } else if (t.mask.defined()) {
    Tensor m = t.mask.narrow(1, i0, bq).narrow(2, j0, bk);
    s = m.dtype() == kBool ? masked_fill(s, logical_not(m), neg_inf) : s + m;
  }
  return s;
}

// The dropout factors of a tile: 1 / (1 - p) where kept, else 0.
Tensor tile_dropout(const Tiles& t, int64_t i0, int64_t bq, int64_t j0, int64_t bk) {
  Tensor z = empty({t.B, bq, bk}, kFloat32);
  float* pz = z.data_ptr<float>();
  parallel_for(0, t.B * bq, 8, [&](int64_t r0, int64_t r1) {
    std::vector<uint64_t> bits(static_cast<size_t>(bk));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / bq, i = i0 + r % bq;
      vec::philox_bits(t.seed, t.base + static_cast<uint64_t>((b * t.L + i) * t.S + j0), bk, bits.data(), nullptr);
      for (int64_t j = 0; j < bk; ++j)
        pz[r * bk + j] = (bits[static_cast<size_t>(j)] >> 11) < t.keep.keep_below ? t.keep.scale : 0.0f;
    }
  });
  return z;
}

// Key blocks a query block sees: under is_causal, none past its last row.
int64_t key_end(const Tiles& t, int64_t i0, int64_t bq) { return t.causal ? std::min(t.S, i0 + bq) : t.S; }

// Returns the output [B, L, Ev] and the rows' logsumexp [B, L, 1].
std::pair<Tensor, Tensor> blocked_forward(const Tiles& t, const Tensor& q, const Tensor& k, const Tensor& v) {
  Tensor out = empty({t.B, t.L, t.Ev}, kFloat32), lse = empty({t.B, t.L, 1}, kFloat32);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int64_t i0 = 0; i0 < t.L; i0 += kBlock) {
    const int64_t bq = std::min(kBlock, t.L - i0);
    Tensor m = full({t.B, bq, 1}, neg_inf), l = zeros({t.B, bq, 1}), acc = zeros({t.B, bq, t.Ev});
    Tensor m_safe = zeros({t.B, bq, 1});
    for (int64_t j0 = 0; j0 < key_end(t, i0, bq); j0 += kBlock) {
      const int64_t bk = std::min(kBlock, t.S - j0);
      Tensor s = tile_scores(t, q, k, i0, bq, j0, bk);
      Tensor m_new = maximum(m, amax(s, {-1}, true));
      // A row masked so far keeps max -inf: subtract 0 there, so its
      // probabilities are exp(-inf) = 0 rather than exp(-inf + inf) = NaN.
      m_safe = masked_fill(m_new, isneginf(m_new), 0.0);
      Tensor p = exp(s - m_safe);
      Tensor corr = exp(m - m_safe);
      l = l * corr + sum(p, {-1}, true);
      if (t.dropout_p > 0) p = p * tile_dropout(t, i0, bq, j0, bk);
      acc = acc * corr + matmul(p, v.narrow(1, j0, bk));
      m = m_new;
    }
    // A fully masked row: l = 0, so NaN output and lse -inf, as the
    // composite's softmax over -inf gives NaN.
    out.narrow(1, i0, bq).copy_(acc / l);
    lse.narrow(1, i0, bq).copy_(m_safe + log(l));
  }
  return {out, lse};
}

// Gradients of q, k and v ([B, *, *]) given dout [B, L, Ev].
std::array<Tensor, 3> blocked_backward(const Tiles& t, const Tensor& q, const Tensor& k, const Tensor& v,
                                       const Tensor& out, const Tensor& lse, const Tensor& dout) {
  Tensor dq = zeros(q.sizes()), dk = zeros(k.sizes()), dv = zeros(v.sizes());
  Tensor rowdot = sum(dout * out, {-1}, true);  // D_i = dout_i . out_i (= sum_j P_ij dP_ij)
  for (int64_t i0 = 0; i0 < t.L; i0 += kBlock) {
    const int64_t bq = std::min(kBlock, t.L - i0);
    Tensor qi = q.narrow(1, i0, bq), doi = dout.narrow(1, i0, bq);
    Tensor lsei = lse.narrow(1, i0, bq), di = rowdot.narrow(1, i0, bq), dqi = dq.narrow(1, i0, bq);
    for (int64_t j0 = 0; j0 < key_end(t, i0, bq); j0 += kBlock) {
      const int64_t bk = std::min(kBlock, t.S - j0);
      Tensor kj = k.narrow(1, j0, bk), vj = v.narrow(1, j0, bk);
      Tensor p = exp(tile_scores(t, q, k, i0, bq, j0, bk) - lsei);
      Tensor dp = matmul(doi, vj.transpose(1, 2));
      Tensor pz = p;
      if (t.dropout_p > 0) {
        Tensor z = tile_dropout(t, i0, bq, j0, bk);
        pz = p * z;
        dp = dp * z;
      }
      dv.narrow(1, j0, bk).add_(matmul(pz.transpose(1, 2), doi));
      Tensor ds = p * (dp - di);
      dqi.add_(matmul(ds, kj), t.scale);
      dk.narrow(1, j0, bk).add_(matmul(ds.transpose(1, 2), qi), t.scale);
    }
  }
  return {dq, dk, dv};
}

bool same_batch(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d + 2 < a.dim(); ++d)
    if (a.size(d) != b.size(d)) return false;
  return true;
}

// Whether the mask broadcasts to the scores' shape [*, L, S] without
// enlarging it (a larger mask makes a larger output: the composite's case).
bool mask_fits(const Tensor& mask, const Tensor& q, int64_t s) {
  if (mask.dim() > q.dim()) return false;
  for (int64_t d = 1; d <= mask.dim(); ++d) {
    const int64_t want = d == 1 ? s : q.size(-d), have = mask.size(-d);
    if (have != 1 && have != want) return false;
  }
  return true;
}

// What the kernel can take: float32 q, k and v with the same batch dims, a
// mask that needs no gradient and broadcasts to the scores, dropout_p below 1.
bool blocked_takes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p) {
  if (q.dtype() != kFloat32 || dropout_p >= 1) return false;
  if (!same_batch(q, k) || !same_batch(q, v) || q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return false;
  return !mask.defined() || (!mask.requires_grad() && (mask.dtype() == kBool || mask.dtype() == kFloat32) &&
                             mask_fits(mask, q, k.size(-2)));
}

// Whether scaled_dot_product_attention runs the blocked kernel: training
// (gradients recorded: what it saves is the point, no [L, S] probabilities
// kept for the backward) with a large scores matrix (attention_runs_blocked),
// on inputs it takes. Without gradients the composite runs, the ops a traced
// graph records, so eager inference and its graph agree bitwise.
bool blocked_applies(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p) {
  if (trace_hook() || !any_requires_grad({&q, &k, &v})) return false;
  if (!attention_runs_blocked(q.numel() / (q.size(-2) * q.size(-1)), q.size(-2), k.size(-2))) return false;
  return blocked_takes(q, k, v, mask, dropout_p);
}

Tensor sdpa_blocked(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                    double dropout_p, bool is_causal, double sc, Generator* gen) {
  Tiles t{};
  t.L = query.size(-2);
  t.S = key.size(-2);
  t.E = query.size(-1);
  t.Ev = value.size(-1);
  t.B = query.numel() / (t.L * t.E);
  t.scale = sc;
  t.causal = is_causal;
  t.dropout_p = dropout_p;
  std::vector<int64_t> full_shape = query.sizes().vec();
  full_shape.back() = t.S;
  if (attn_mask.defined()) t.mask = attn_mask.expand(full_shape).reshape({t.B, t.L, t.S});
  if (dropout_p > 0) {
    Generator& g = gen ? *gen : default_generator();
    t.seed = g.seed();
    t.base = g.reserve(static_cast<uint64_t>(t.B * t.L * t.S));
    t.keep = detail::dropout_keep(dropout_p);
  }
  const Tensor q = query.reshape({t.B, t.L, t.E}).contiguous(), k = key.reshape({t.B, t.S, t.E}).contiguous(),
               v = value.reshape({t.B, t.S, t.Ev}).contiguous();
  Tensor out, lse;
  {
    NoGradGuard no_grad;
    std::tie(out, lse) = blocked_forward(t, q, k, v);
  }
  std::vector<int64_t> out_shape = query.sizes().vec();
  out_shape.back() = t.Ev;
  Tensor result = out.view(out_shape);
  if (!any_requires_grad({&query, &key, &value})) return result;
  SavedTensor sq = save(q), sk = save(k), sv = save(v), so = save(out);
  std::vector<int64_t> qs = query.sizes().vec(), ks = key.sizes().vec(), vs = value.sizes().vec();
  record("ScaledDotProductFlashAttentionBackward0", {&query, &key, &value}, {sq, sk, sv, so}, result,
         [t, sq, sk, sv, so, lse, qs, ks, vs](const variable_list& g) -> variable_list {
           EMBER_CHECK(!GradMode::is_enabled(),
                       "scaled_dot_product_attention: the blocked float32 kernel has no double backward "
                       "(create_graph=true); run the attention in float64, which takes the composite");
           Tensor dout = g[0].reshape({t.B, t.L, t.Ev}).contiguous();
           auto [dq, dk, dv] = blocked_backward(t, sq.unpack(), sk.unpack(), sv.unpack(), so.unpack(), lse, dout);
           return {dq.view(qs), dk.view(ks), dv.view(vs)};
         });
  return result;
}

}  // namespace

namespace detail {
Tensor scaled_dot_product_attention_blocked(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& attn_mask, double dropout_p, bool is_causal,
                                            std::optional<double> scale, Generator* gen) {
  EMBER_CHECK(blocked_takes(query, key, value, attn_mask, dropout_p),
              "scaled_dot_product_attention_blocked: expected float32 query, key and value with the same batch "
              "dims, a mask broadcastable to the scores needing no gradient, and dropout_p < 1; got {}, {}, {}",
              shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  const double sc = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  return sdpa_blocked(query, key, value, attn_mask, dropout_p, is_causal, sc, gen);
}
}  // namespace detail

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
  double sc = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  if (blocked_applies(query, key, value, attn_mask, dropout_p))
    return sdpa_blocked(query, key, value, attn_mask, dropout_p, is_causal, sc, gen);
  return sdpa_composite(query, key, value, attn_mask, dropout_p, is_causal, sc, gen);
}

}  // namespace ember

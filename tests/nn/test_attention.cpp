// MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against
// PyTorch 1.13 (tests/data/gen_attention.py -> attention_reference.safetensors):
// outputs, attention weights and gradients of inputs and every parameter
// (float64), names and reprs; gradcheck on a tiny attention.
#include <cmath>
#include <functional>

#include "ember/autograd/gradcheck.h"
#include "ember/nn/attention.h"
#include "ember/nn/transformer.h"
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct AttentionReference {
  StateDict tensors;
  safetensors::Metadata meta;
};

const AttentionReference& aref() {
  static const AttentionReference r = [] {
    AttentionReference out;
    out.tensors =
        safetensors::load_file(std::string(EMBER_TEST_DATA_DIR) + "/attention_reference.safetensors", &out.meta);
    return out;
  }();
  return r;
}

Tensor want(const std::string& key) {
  EXPECT_TRUE(aref().tensors.contains(key)) << "missing reference tensor " << key;
  return aref().tensors.at(key);
}
bool has(const std::string& key) { return aref().tensors.contains(key); }
Tensor maybe(const std::string& key) { return has(key) ? want(key) : Tensor(); }

// Converts m to float64 and loads "<name>.p.*" (strict: every parameter).
void load_params(nn::Module& m, const std::string& name) {
  m.to(kFloat64);
  StateDict d;
  std::string prefix = name + ".p.";
  for (const auto& [k, v] : aref().tensors)
    if (k.rfind(prefix, 0) == 0) d.insert(k.substr(prefix.size()), v);
  m.load_state_dict(d, true);
}

std::vector<Tensor> inputs(const std::string& name) {
  std::vector<Tensor> xs;
  for (int i = 0; has(name + ".x" + std::to_string(i)); ++i)
    xs.push_back(want(name + ".x" + std::to_string(i)).clone().requires_grad_());
  return xs;
}

void check_grads(const std::string& name, nn::Module& m, const std::vector<Tensor>& xs) {
  for (size_t i = 0; i < xs.size(); ++i)
    expect_close(xs[i].grad(), want(name + ".gx" + std::to_string(i)), name + " input grad " + std::to_string(i));
  for (auto& [pname, p] : m.named_parameters())
    expect_close(p.grad(), want(name + ".g." + pname), name + " grad of " + pname);
}

// Runs reference case `name` through m: q = k = v = x0 for self-attention,
// else (x0, x1, x2); masks from the reference; backprops
// (y * gy).sum() + (w * gw).sum() and compares everything.
void check_mha(const std::string& name, nn::MultiheadAttention& m, nn::AttentionOptions o = {}) {
  load_params(m, name);
  std::vector<Tensor> xs = inputs(name);
  o.key_padding_mask = maybe(name + ".key_padding_mask");
  if (!o.attn_mask.defined()) o.attn_mask = maybe(name + ".attn_mask");
  auto [y, w] = xs.size() == 1 ? m.forward(xs[0], xs[0], xs[0], o) : m.forward(xs[0], xs[1], xs[2], o);
  expect_close(y, want(name + ".y"), name + " output");
  Tensor loss = (y * want(name + ".gy")).sum();
  if (o.need_weights) {
    expect_close(w, want(name + ".w"), name + " attention weights");
    loss = loss + (w * want(name + ".gw")).sum();
  } else {
    EXPECT_FALSE(w.defined()) << name << ": need_weights=false must return no weights";
  }
  loss.backward();
  check_grads(name, m, xs);
}

void check_encoder(const std::string& name, nn::Module& m,
                   const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& fwd) {
  load_params(m, name);
  std::vector<Tensor> xs = inputs(name);
  Tensor y = fwd(xs[0], maybe(name + ".attn_mask"), maybe(name + ".key_padding_mask"));
  expect_close(y, want(name + ".y"), name + " output");
  (y * want(name + ".gy")).sum().backward();
  check_grads(name, m, xs);
}

std::string joined(const nn::NamedTensors& named) {
  std::string s;
  for (const auto& [n, t] : named) s += (s.empty() ? "" : ",") + n;
  return s;
}
std::string joined(const nn::NamedModules& named) {
  std::string s;
  for (size_t i = 0; i < named.size(); ++i) s += (i ? "," : "") + named[i].first;
  return s;
}

}  // namespace

// ---- MultiheadAttention ----

TEST(NnAttention, SelfAttentionMatchesPyTorch) {
  nn::MultiheadAttention m(8, 2);
  check_mha("mha_self", m);
}

TEST(NnAttention, BatchFirstCrossAttentionWithKeyPaddingMatchesPyTorch) {
  nn::MultiheadAttention m(8, 2, 0.0, true, /*batch_first=*/true);
  check_mha("mha_cross_bf", m);
}

TEST(NnAttention, CausalMaskWithKeyPaddingMatchesPyTorch) {
  nn::MultiheadAttention m(8, 2);
  check_mha("mha_causal", m);
  // is_causal builds the same mask as the stored triu(ones, 1).
  nn::MultiheadAttention c(8, 2);
  nn::AttentionOptions o;
  o.is_causal = true;
  Tensor stored = want("mha_causal.attn_mask");
  EXPECT_TRUE(equal(nn::causal_mask(5, 5), stored));
  check_mha("mha_causal", c, [&] {
    nn::AttentionOptions opts;
    opts.is_causal = true;
    return opts;
  }());
}

TEST(NnAttention, FloatAdditiveMasksMatchPyTorch) {
  nn::MultiheadAttention m3(8, 2, 0.0, true, true);
  check_mha("mha_float3d", m3);  // [N * heads, L, S] float mask merged with a bool key padding mask
  nn::MultiheadAttention m2(8, 2, 0.0, /*bias=*/false);
  EXPECT_FALSE(m2.in_proj_bias.defined());
  EXPECT_FALSE(m2.out_proj->bias.defined());
  EXPECT_EQ(m2.parameters().size(), 2u);
  nn::AttentionOptions per_head;
  per_head.average_attn_weights = false;
  check_mha("mha_nobias_perhead", m2, per_head);  // [L, S] float mask, weights [N, heads, L, S]
}

TEST(NnAttention, NeedWeightsFalseAndUnbatchedMatchPyTorch) {
  nn::MultiheadAttention m(8, 4, 0.0, true, true);
  nn::AttentionOptions no_weights;
  no_weights.need_weights = false;
  check_mha("mha_noweights", m, no_weights);
  nn::MultiheadAttention u(8, 2);
  check_mha("mha_unbatched", u);
}

TEST(NnAttention, FullyMaskedRowGivesNaNLikePyTorch) {
  // PyTorch 1.13 softmaxes a row of -inf into NaN (Note [attention masks]).
  nn::MultiheadAttention m(8, 2, 0.0, true, true);
  load_params(m, "mha_nan");
  Tensor x = want("mha_nan.x0");
  nn::AttentionOptions o;
  o.key_padding_mask = want("mha_nan.key_padding_mask");
  auto [y, w] = m.forward(x, x, x, o);
  EXPECT_TRUE(equal(isnan(y), isnan(want("mha_nan.y"))));
  EXPECT_TRUE(equal(isnan(w), isnan(want("mha_nan.w"))));
  EXPECT_TRUE(all(isnan(y.select(0, 1))).item<bool>());
  Tensor finite_want = want("mha_nan.y").select(0, 0);
  expect_close(y.select(0, 0), finite_want, "mha_nan unmasked batch entry");
}

TEST(NnAttention, InitNamesAndShapesFollowPyTorch) {
  manual_seed(0);
  nn::MultiheadAttention m(16, 4);
  EXPECT_EQ(m.in_proj_weight.sizes().vec(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(m.in_proj_bias.sizes().vec(), (std::vector<int64_t>{48}));
  EXPECT_EQ(m.out_proj->weight.sizes().vec(), (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(m.head_dim, 4);
  // xavier_uniform_ over fan_in = 16, fan_out = 48; biases zero.
  double xavier = std::sqrt(6.0 / (16 + 48));
  EXPECT_LE(m.in_proj_weight.abs().max().item<double>(), xavier);
  EXPECT_GT(m.in_proj_weight.abs().max().item<double>(), 0.8 * xavier);
  EXPECT_EQ(m.in_proj_bias.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(m.out_proj->bias.abs().sum().item<float>(), 0.0f);
  EXPECT_LE(m.out_proj->weight.abs().max().item<double>(), 1.0 / std::sqrt(16.0));
  EXPECT_TRUE(m.in_proj_weight.requires_grad());
}

TEST(NnAttention, ErrorsNameTheModuleAndTheShapes) {
  expect_error([] { nn::MultiheadAttention(10, 3); }, {"MultiheadAttention", "divisible", "embed_dim=10",
                                                       "num_heads=3"});
  nn::MultiheadAttention m(8, 2);
  Tensor x = zeros({5, 3, 8});
  nn::AttentionOptions bad;
  bad.attn_mask = zeros({4, 5}, kBool);
  expect_error([&] { m.forward(x, x, x, bad); }, {"MultiheadAttention", "attn_mask", "[5, 5]", "[4, 5]"});
  nn::AttentionOptions bad_kpm;
  bad_kpm.key_padding_mask = zeros({5, 3}, kBool);
  expect_error([&] { m.forward(x, x, x, bad_kpm); }, {"MultiheadAttention", "key_padding_mask", "[3, 5]", "[5, 3]"});
  nn::AttentionOptions int_mask;
  int_mask.attn_mask = zeros({5, 5}, kInt64);
  expect_error([&] { m.forward(x, x, x, int_mask); }, {"MultiheadAttention", "attn_mask", "bool"});
  expect_error([&] { m.forward(zeros({5, 3, 6}), zeros({5, 3, 6}), zeros({5, 3, 6})); },
               {"MultiheadAttention", "embed_dim=8", "[5, 3, 6]"});
  expect_error([&] { m.forward(x); }, {"MultiheadAttention"});
}

TEST(NnAttention, DropoutActsOnlyInTraining) {
  manual_seed(1);
  nn::MultiheadAttention m(8, 2, 0.5);
  Tensor x = randn({4, 2, 8});
  m.eval();
  auto [y1, w1] = m.forward(x, x, x);
  auto [y2, w2] = m.forward(x, x, x);
  EXPECT_TRUE(equal(y1, y2));
  // Eval weights are a softmax: rows sum to 1.
  EXPECT_LT((sum(w1, {-1}) - 1.0).abs().max().item<float>(), 1e-5f);
  m.train();
  auto [y3, w3] = m.forward(x, x, x);
  EXPECT_FALSE(equal(y1, y3));
  // The returned weights are the dropped ones (PyTorch): some exact zeros.
  EXPECT_GT(sum(eq(w3, 0.0)).item<int64_t>(), 0);
}

TEST(NnAttention, GradcheckTinyAttention) {
  manual_seed(5);
  nn::MultiheadAttention m(4, 2, 0.0, true, true, kFloat64);
  {
    NoGradGuard g;  // non-zero biases, so their gradients are checked too
    for (Tensor& p : m.parameters()) p.add_(randn(p.sizes(), kFloat64) * 0.3);
  }
  nn::AttentionOptions o;
  o.key_padding_mask = tensor<bool>({false, false, true, false, false, false}, {2, 3});
  o.attn_mask = randn({2, 3}, kFloat64);
  variable_list in{randn({2, 2, 4}, kFloat64).requires_grad_(), randn({2, 3, 4}, kFloat64).requires_grad_(),
                   randn({2, 3, 4}, kFloat64).requires_grad_()};
  for (Tensor& p : m.parameters()) in.push_back(p);
  autograd::gradcheck(
      [&](const variable_list& xs) {
        auto [y, w] = m.forward(xs[0], xs[1], xs[2], o);
        return variable_list{y, w};
      },
      in);
}

// ---- TransformerEncoderLayer / TransformerEncoder ----

TEST(NnTransformer, EncoderLayerMatchesPyTorch) {
  struct Case {
    std::string name;
    std::string activation;
    double eps;
    bool batch_first, norm_first;
  };
  for (const Case& c : {Case{"tel_relu_post", "relu", 1e-5, false, false},
                        Case{"tel_gelu_pre_bf", "gelu", 1e-5, true, true},
                        Case{"tel_gelu_post_bf", "gelu", 1e-5, true, false},
                        Case{"tel_relu_pre", "relu", 1e-6, false, true}}) {
    SCOPED_TRACE(c.name);
    nn::TransformerEncoderLayer layer(8, 2, 16, 0.0, c.activation, c.eps, c.batch_first, c.norm_first);
    check_encoder(c.name, layer, [&](const Tensor& x, const Tensor& mask, const Tensor& kpm) {
      return layer.forward(x, mask, kpm);
    });
  }
}

TEST(NnTransformer, EncoderWithFinalNormMatchesPyTorch) {
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0, "relu", 1e-5, true);
  nn::TransformerEncoder enc(layer, 2, std::make_shared<nn::LayerNorm>(std::vector<int64_t>{8}));
  check_encoder("encoder", enc, [&](const Tensor& x, const Tensor& mask, const Tensor& kpm) {
    return enc.forward(x, mask, kpm);
  });
  // A float -inf mask is the same as the bool causal one.
  Tensor x = want("encoder.x0");
  Tensor kpm = want("encoder.key_padding_mask");
  expect_close(enc.forward(x, nn::generate_square_subsequent_mask(5, kFloat64), kpm), want("encoder.y"),
               "encoder with the float causal mask");
}

TEST(NnTransformer, NamesAndReprsMatchPyTorch) {
  std::vector<std::pair<std::string, nn::ModulePtr>> models = {
      {"mha", std::make_shared<nn::MultiheadAttention>(8, 2, 0.1)},
      {"mha_nobias", std::make_shared<nn::MultiheadAttention>(8, 2, 0.0, false, true)},
      {"tel", std::make_shared<nn::TransformerEncoderLayer>(8, 2, 16, 0.1, "gelu", 1e-6)},
      {"encoder", std::make_shared<nn::TransformerEncoder>(
                      nn::TransformerEncoderLayer(8, 2, 16, 0.0, "relu", 1e-5, false, true), 2,
                      std::make_shared<nn::LayerNorm>(std::vector<int64_t>{8}))},
      {"encoder_nonorm", std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderLayer(8, 2), 3)},
  };
  for (auto& [which, m] : models) {
    SCOPED_TRACE(which);
    EXPECT_EQ(m->repr(), aref().meta.at("repr." + which));
    EXPECT_EQ(joined(m->named_parameters()), aref().meta.at("params." + which));
    std::string keys;
    for (const auto& k : m->state_dict().keys()) keys += (keys.empty() ? "" : ",") + k;
    EXPECT_EQ(keys, aref().meta.at("keys." + which));
    EXPECT_EQ(joined(m->named_modules()), aref().meta.at("modules." + which));
  }
}

TEST(NnTransformer, EncoderStacksDeepCopies) {
  manual_seed(2);
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.1);
  layer.to(kFloat64);
  layer.linear1->weight.requires_grad_(false);
  layer.eval();
  nn::TransformerEncoder enc(layer, 2);
  auto l0 = std::dynamic_pointer_cast<nn::TransformerEncoderLayer>((*enc.layers)[0]);
  auto l1 = std::dynamic_pointer_cast<nn::TransformerEncoderLayer>((*enc.layers)[1]);
  ASSERT_TRUE(l0 && l1);
  // Same values, dtype, flags and mode; separate storage.
  EXPECT_TRUE(equal(l0->self_attn->in_proj_weight, layer.self_attn->in_proj_weight));
  EXPECT_EQ(l0->self_attn->in_proj_weight.scalar_type(), kFloat64);
  EXPECT_FALSE(l1->linear1->weight.requires_grad());
  EXPECT_TRUE(l1->linear2->weight.requires_grad());
  EXPECT_FALSE(l1->is_training());
  {
    NoGradGuard g;
    l0->norm1->weight.add_(1.0);
  }
  EXPECT_FALSE(equal(l0->norm1->weight, l1->norm1->weight));
  EXPECT_FALSE(equal(l0->norm1->weight, layer.norm1->weight));
  EXPECT_EQ(enc.parameters().size(), 2 * layer.parameters().size());
  expect_error([] { nn::TransformerEncoderLayer(8, 2, 16, 0.1, "tanh"); },
               {"TransformerEncoderLayer", "relu", "gelu", "tanh"});
}

TEST(NnTransformer, SquareSubsequentMask) {
  Tensor m = nn::generate_square_subsequent_mask(3);
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0}));
}

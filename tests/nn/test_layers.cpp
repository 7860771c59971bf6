// Layers against PyTorch 1.13: outputs, input and parameter gradients, and
// buffers after a training step (float64, same weights and inputs).
#include <functional>

#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

using Forward = std::function<Tensor(nn::Module&, const std::vector<Tensor>&)>;

Tensor single(nn::Module& m, const std::vector<Tensor>& x) { return m.forward(x[0]); }

// Runs ref inputs through m (weights from the reference), backprops
// (y * gy).sum() and compares y, input grads, parameter grads and buffers.
void check_layer(const std::string& name, nn::Module& m, const Forward& fwd = single) {
  m.to(kFloat64);
  load_ref_state(m, name);
  std::vector<Tensor> xs;
  for (int i = 0; has_ref(name + ".x" + std::to_string(i)); ++i) {
    Tensor x = golden(name + ".x" + std::to_string(i)).clone();
    if (x.is_floating_point()) x.requires_grad_();
    xs.push_back(x);
  }
  Tensor y = fwd(m, xs);
  expect_close(y, golden(name + ".y"), name + " output");
  (y * golden(name + ".gy")).sum().backward();
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string k = name + ".gx" + std::to_string(i);
    if (has_ref(k)) expect_close(xs[i].grad(), golden(k), name + " input grad " + std::to_string(i));
  }
  for (auto& [pname, p] : m.named_parameters())
    expect_close(p.grad(), golden(name + ".g." + pname), name + " grad of " + pname);
  for (auto& [bname, b] : m.named_buffers())
    expect_close(b, golden(name + ".after." + bname), name + " buffer " + bname + " after the step");
}

}  // namespace

TEST(NnLayers, LinearMatchesPyTorch) {
  nn::Linear lin(5, 3);
  check_layer("linear", lin);
  nn::Linear nob(5, 3, false);
  check_layer("linear_nobias", nob);
  EXPECT_FALSE(nob.bias.defined());
  EXPECT_EQ(nob.parameters().size(), 1u);
}

TEST(NnLayers, BilinearMatchesPyTorch) {
  nn::Bilinear bl(3, 4, 2);
  check_layer("bilinear", bl, [](nn::Module& m, const std::vector<Tensor>& x) {
    return static_cast<nn::Bilinear&>(m).forward(x[0], x[1]);
  });
}

TEST(NnLayers, EmbeddingPaddingRowGetsNoGradient) {
  nn::Embedding emb(10, 3, 1);
  // The padding row starts at zero.
  EXPECT_EQ(emb.weight.select(0, 1).abs().sum().item<double>(), 0.0);
  check_layer("embedding", emb);
  EXPECT_EQ(emb.weight.grad().select(0, 1).abs().sum().item<double>(), 0.0);
  nn::Embedding neg(10, 3, -1);
  EXPECT_EQ(*neg.padding_idx, 9);
  expect_error([&] { emb.forward(tensor<double>({1.0})); }, {"embedding", "int64"});
}

// F.embedding wraps a negative padding_idx like nn.Embedding does (PyTorch 1.13:
// F.embedding(torch.tensor([9, 0, 9, 3]), w, padding_idx=-1).sum().backward() leaves
// w.grad[9] == 0 and w.grad[0] == w.grad[3] == 1); before the wrap the padding row
// received a gradient of 2 per element.
TEST(NnLayers, FunctionalEmbeddingWrapsNegativePaddingIdx) {
  Tensor w = ones({10, 3}).requires_grad_();
  embedding(tensor<int64_t>({9, 0, 9, 3}), w, -1).sum().backward();
  Tensor g = w.grad();
  EXPECT_EQ(g.select(0, 9).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(g.select(0, 0).sum().item<double>(), 3.0);
  EXPECT_EQ(g.select(0, 3).sum().item<double>(), 3.0);
  EXPECT_EQ(g.sum().item<double>(), 6.0);
  expect_error([&] { embedding(tensor<int64_t>({0}), w, -11); }, {"embedding", "padding_idx", "-11"});
  expect_error([&] { embedding(tensor<int64_t>({0}), w, 10); }, {"embedding", "padding_idx", "10"});
}

// F.embedding's max_norm, norm_type and scale_grad_by_freq against torch 1.13:
//   w = (torch.arange(12.).reshape(4, 3) / 4); idx = torch.tensor([[1, 3, 1], [0, 3, 3]])
//   F.embedding(idx, w, max_norm=1.0) renorms w in place to
//     [0, .25, .5, .424264, .5656854, .7071067, 1.5, 1.75, 2, .5178918, .5754353, .6329789]
//   F.embedding(idx, w, max_norm=2.0, norm_type=1.0) ->
//     [0, .25, .5, .5, .6666666, .8333333, 1.5, 1.75, 2, .6, .6666666, .7333333]
//   y = F.embedding(idx, w, scale_grad_by_freq=True, padding_idx=0)
//   (y * torch.arange(18.).reshape(2, 3, 3)).sum().backward() -> w.grad
//     [0, 0, 0, 3, 4, 5, 0, 0, 0, 10, 11, 12]
//   repr(nn.Embedding(4, 3, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True))
TEST(NnLayers, EmbeddingMaxNormAndScaleGradByFreqMatchPyTorch) {
  const Tensor idx = tensor<int64_t>({1, 3, 1, 0, 3, 3}).reshape({2, 3});
  auto table = [] { return (arange(12).to(kFloat32).reshape({4, 3}) / 4.0).requires_grad_(); };
  Tensor w = table();
  Tensor y = embedding(idx, w, std::nullopt, 1.0);
  const std::vector<double> renormed = {0, .25, .5, .424264, .5656854, .7071067, 1.5, 1.75, 2, .5178918, .5754353,
                                        .6329789};
  ember::testing::expect_values(w.detach(), {4, 3}, renormed, 1e-6);
  ember::testing::expect_values(y.select(0, 1).select(0, 0), {3}, {0, .25, .5});  // row 0 was within the norm
  ember::testing::expect_values(y.select(0, 0).select(0, 1), {3}, {.5178918, .5754353, .6329789}, 1e-6);
  Tensor w1 = table();
  (void)embedding(idx, w1, std::nullopt, 2.0, 1.0);
  ember::testing::expect_values(w1.detach(), {4, 3},
                                {0, .25, .5, .5, .6666666, .8333333, 1.5, 1.75, 2, .6, .6666666, .7333333}, 1e-6);
  Tensor w2 = table();
  (embedding(idx, w2, 0, std::nullopt, 2.0, true) * arange(18).to(kFloat32).reshape({2, 3, 3})).sum().backward();
  ember::testing::expect_values(w2.grad(), {4, 3}, {0, 0, 0, 3, 4, 5, 0, 0, 0, 10, 11, 12});
  // The module passes them on, and prints them as PyTorch does.
  nn::Embedding m(4, 3, std::nullopt, 1.0, 1.5, true);
  EXPECT_EQ(m.repr(), "Embedding(4, 3, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True)");
  (void)m(idx);
  for (int64_t r : {0, 1, 3}) EXPECT_LE(norm(m.weight.detach().select(0, r), 1.5).item<double>(), 1.0 + 1e-6);
  expect_error([] { nn::Embedding(4, 3, std::nullopt, std::nullopt, 2.0, false, true); },
               {"Embedding", "sparse=true is not supported"});
  expect_error([&] { (void)embedding(tensor<int64_t>({7}), table(), std::nullopt, 1.0); },
               {"embedding", "index 7 is out of range for 4 embeddings"});
}

TEST(NnLayers, BatchNormTrainAndEvalMatchPyTorch) {
  for (const char* name : {"bn1d", "bn1d_3d", "bn2d"}) {
    SCOPED_TRACE(name);
    std::shared_ptr<nn::BatchNorm> bn;
    if (std::string(name) == "bn2d") {
      bn = std::make_shared<nn::BatchNorm2d>(3);
    } else {
      bn = std::make_shared<nn::BatchNorm1d>(3);
    }
    EXPECT_TRUE(bn->is_training());
    check_layer(name, *bn);
    EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
    bn->eval();
    NoGradGuard g;
    expect_close(bn->forward(golden(std::string(name) + ".x0")), golden(std::string(name) + ".y_eval"),
                 std::string(name) + " eval output");
    // Eval leaves the running stats alone.
    expect_close(bn->running_mean, golden(std::string(name) + ".after.running_mean"), "running_mean after eval");
  }
}

TEST(NnLayers, BatchNormCumulativeMomentumAndNoStats) {
  nn::BatchNorm1d bn(3, 1e-5, std::nullopt);
  bn.to(kFloat64);
  bn.forward(golden("bn_cumulative.x0"));
  bn.forward(golden("bn_cumulative.x1"));
  for (auto& [k, b] : bn.named_buffers()) expect_close(b, golden("bn_cumulative.after." + k), k);

  nn::BatchNorm1d ns(3, 1e-5, 0.1, false, false);
  EXPECT_TRUE(ns.state_dict().empty());
  ns.eval();  // without running stats, eval still uses batch stats
  check_layer("bn_nostats", ns);
  expect_error([&] { nn::BatchNorm2d(3).forward(zeros({2, 3})); }, {"BatchNorm2d", "expected 4D input", "2D"});
  expect_error([&] { nn::BatchNorm1d(3).forward(zeros({1, 3})); }, {"more than 1 value per channel"});
}

TEST(NnLayers, LayerNormAndGroupNormMatchPyTorch) {
  nn::LayerNorm ln({4, 5});
  check_layer("layernorm", ln);
  nn::GroupNorm gn(2, 6);
  check_layer("groupnorm", gn);
  expect_error([&] { ln.forward(zeros({3, 5, 4})); }, {"layer_norm", "[*, 4, 5]", "[3, 5, 4]"});
  expect_error([] { nn::GroupNorm(4, 6); }, {"GroupNorm", "divisible"});
}

TEST(NnLayers, ActivationsMatchPyTorch) {
  std::vector<std::pair<std::string, nn::ModulePtr>> acts = {
      {"relu", std::make_shared<nn::ReLU>()},
      {"leaky_relu", std::make_shared<nn::LeakyReLU>(0.2)},
      {"gelu", std::make_shared<nn::GELU>()},
      {"gelu_tanh", std::make_shared<nn::GELU>("tanh")},
      {"silu", std::make_shared<nn::SiLU>()},
      {"sigmoid", std::make_shared<nn::Sigmoid>()},
      {"tanh", std::make_shared<nn::Tanh>()},
      {"softmax", std::make_shared<nn::Softmax>(1)},
      {"log_softmax", std::make_shared<nn::LogSoftmax>(1)},
      {"softplus", std::make_shared<nn::Softplus>(2, 5)},
      {"elu", std::make_shared<nn::ELU>(0.7)},
  };
  for (auto& [name, m] : acts) {
    SCOPED_TRACE(name);
    check_layer(name, *m);
  }
}

TEST(NnLayers, ActivationsStayFiniteAtExtremes) {
  Tensor x = tensor<double>({-1000.0, -50.0, 0.0, 50.0, 1000.0}).requires_grad_();
  for (const auto& y : {softplus(x), elu(x), leaky_relu(x)}) {
    y.sum().backward();
    EXPECT_TRUE(isfinite(y).all().item<bool>()) << y;
    EXPECT_TRUE(isfinite(x.grad()).all().item<bool>()) << x.grad();
    x.set_grad(Tensor());
  }
}

TEST(NnLayers, FlattenUnflattenIdentity) {
  Tensor x = randn({2, 3, 4, 5});
  EXPECT_EQ(nn::Flatten().forward(x).sizes().vec(), (std::vector<int64_t>{2, 60}));
  EXPECT_EQ(nn::Flatten(0, 2).forward(x).sizes().vec(), (std::vector<int64_t>{24, 5}));
  EXPECT_EQ(nn::Unflatten(1, {3, 1}).forward(zeros({2, 3})).sizes().vec(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_TRUE(nn::Identity().forward(x).is_same(x));
}

TEST(NnLayers, DropoutScalesInTrainingAndIsIdentityInEval) {
  Generator gen(123);
  nn::Dropout d(0.3, &gen);
  Tensor x = ones({200000});
  Tensor y = d.forward(x);
  std::vector<float> v = y.to_vector<float>();
  int64_t zeros_n = 0;
  for (float e : v) {
    if (e == 0) {
      ++zeros_n;
    } else {
      ASSERT_NEAR(e, 1.0 / 0.7, 1e-6);  // survivors scaled by 1 / (1 - p)
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros_n) / 200000.0, 0.3, 0.005);
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.01);  // expectation preserved
  // Gradient flows through the same mask.
  Tensor xr = ones({1000}).requires_grad_();
  Tensor yr = d.forward(xr);
  yr.sum().backward();
  EXPECT_TRUE(allclose(xr.grad(), yr.detach()));
  d.eval();
  EXPECT_TRUE(d.forward(x).is_same(x));
  EXPECT_EQ(nn::Dropout(1.0).forward(x).abs().sum().item<double>(), 0.0);
  expect_error([] { nn::Dropout(1.5); }, {"Dropout", "between 0 and 1", "1.5"});
}

TEST(NnLayers, Dropout2dZeroesWholeChannels) {
  Generator gen(7);
  nn::Dropout2d d(0.5, &gen);
  Tensor y = d.forward(ones({8, 16, 3, 3}));
  Tensor mx = amax(y, {2, 3}), mn = amin(y, {2, 3});
  EXPECT_TRUE(equal(mx, mn));  // each channel is all zero or all 2
  std::vector<float> v = mx.to_vector<float>();
  int64_t dropped = 0;
  for (float e : v) {
    EXPECT_TRUE(e == 0.0f || e == 2.0f);
    dropped += e == 0.0f;
  }
  EXPECT_GT(dropped, 20);
  EXPECT_LT(dropped, 108);
  d.eval();
  Tensor x = randn({2, 3, 4, 4});
  EXPECT_TRUE(d.forward(x).is_same(x));
}

// RNN, LSTM and GRU against PyTorch 1.13 (tests/data/gen_rnn.py): outputs,
// final states and every gradient, dense and packed; names, repr, gradcheck.
#include <functional>
#include <memory>

#include <gmock/gmock.h>

#include "ember/autograd/gradcheck.h"
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct RnnReference {
  StateDict tensors;
  safetensors::Metadata meta;
};

const RnnReference& rnn_ref() {
  static const RnnReference r = [] {
    RnnReference out;
    out.tensors = safetensors::load_file(std::string(EMBER_TEST_DATA_DIR) + "/rnn_reference.safetensors", &out.meta);
    return out;
  }();
  return r;
}

Tensor want(const std::string& key) { return rnn_ref().tensors.at(key); }
bool has(const std::string& key) { return rnn_ref().tensors.contains(key); }

// (output, h_n, c_n) of any of the three layers, c_n undefined unless LSTM.
struct Out {
  Tensor y, hn, cn;
};

Out run(nn::RNNBase& m, const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0) {
  if (auto* lstm = dynamic_cast<nn::LSTM*>(&m)) {
    auto [y, s] = lengths.defined() ? lstm->forward(x, lengths, {h0, c0}) : lstm->forward(x, {h0, c0});
    return {y, s.first, s.second};
  }
  if (auto* gru = dynamic_cast<nn::GRU*>(&m)) {
    auto [y, h] = lengths.defined() ? gru->forward(x, lengths, h0) : gru->forward(x, h0);
    return {y, h, Tensor()};
  }
  auto& rnn = dynamic_cast<nn::RNN&>(m);
  auto [y, h] = lengths.defined() ? rnn.forward(x, lengths, h0) : rnn.forward(x, h0);
  return {y, h, Tensor()};
}

Tensor leaf(const std::string& key) { return has(key) ? want(key).clone().requires_grad_() : Tensor(); }

// Loads the reference weights into m, runs the reference inputs, and
// compares outputs, final states and the gradients of
// sum(y * gy) + sum(h_n * ghn) [+ sum(c_n * gcn)] with PyTorch's.
void check_against_pytorch(const std::string& name, nn::RNNBase& m) {
  SCOPED_TRACE(name);
  m.to(kFloat64);
  StateDict weights;
  const std::string prefix = name + ".p.";
  for (const auto& [k, v] : rnn_ref().tensors)
    if (k.rfind(prefix, 0) == 0) weights.insert(k.substr(prefix.size()), v);
  m.load_state_dict(weights, true);

  Tensor x = leaf(name + ".x"), h0 = leaf(name + ".h0"), c0 = leaf(name + ".c0");
  Tensor lengths = has(name + ".lengths") ? want(name + ".lengths") : Tensor();
  Out out = run(m, x, lengths, h0, c0);
  expect_close(out.y, want(name + ".y"), name + " output");
  expect_close(out.hn, want(name + ".hn"), name + " h_n");
  Tensor loss = (out.y * want(name + ".gy")).sum() + (out.hn * want(name + ".ghn")).sum();
  if (has(name + ".cn")) {
    expect_close(out.cn, want(name + ".cn"), name + " c_n");
    loss = loss + (out.cn * want(name + ".gcn")).sum();
  }
  loss.backward();
  expect_close(x.grad(), want(name + ".gx"), name + " grad of input");
  if (h0.defined()) expect_close(h0.grad(), want(name + ".gh0"), name + " grad of h0");
  if (c0.defined()) expect_close(c0.grad(), want(name + ".gc0"), name + " grad of c0");
  for (auto& [pname, p] : m.named_parameters())
    expect_close(p.grad(), want(name + ".g." + pname), name + " grad of " + pname);
}

}  // namespace

// ---- dense sequences (configurations as in gen_rnn.py) ----

TEST(NnRnnReference, RNN) {
  nn::RNN tanh_rnn(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("rnn_tanh", tanh_rnn);
  nn::RNN relu_rnn(3, 4, {.num_layers = 2, .nonlinearity = "relu", .batch_first = true});
  check_against_pytorch("rnn_relu_bf", relu_rnn);
}

TEST(NnRnnReference, LSTM) {
  nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("lstm", lstm);
  nn::LSTM lstm_bf(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  check_against_pytorch("lstm_bf", lstm_bf);
}

TEST(NnRnnReference, GRU) {
  nn::GRU gru(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("gru", gru);
  nn::GRU gru_bf(3, 4, {.bias = false, .batch_first = true});
  check_against_pytorch("gru_bf_nobias", gru_bf);
}

// ---- padded batch + lengths vs pack_padded_sequence(enforce_sorted=False) ----

TEST(NnRnnPacked, RNN) {
  nn::RNN rnn(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("rnn_packed", rnn);
}

TEST(NnRnnPacked, LSTM) {
  nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("lstm_packed", lstm);
  nn::LSTM lstm_bf(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  check_against_pytorch("lstm_packed_bf", lstm_bf);
}

TEST(NnRnnPacked, GRU) {
  nn::GRU gru(3, 4, {.num_layers = 2, .bidirectional = true});
  check_against_pytorch("gru_packed", gru);
  nn::GRU gru_bf(3, 4, {.batch_first = true});
  check_against_pytorch("gru_packed_bf", gru_bf);
}

TEST(NnRnnPacked, FullLengthsEqualDense) {
  manual_seed(5);
  nn::GRU gru(3, 4, {.num_layers = 2, .bidirectional = true, .dtype = kFloat64});
  Tensor x = randn({5, 2, 3}, kFloat64);
  auto [y_dense, h_dense] = gru.forward(x);
  auto [y_packed, h_packed] = gru.forward(x, tensor<int64_t>({5, 5}), Tensor());
  expect_close(y_packed, y_dense, "output");
  expect_close(h_packed, h_dense, "h_n");
}

// ---- module surface ----

TEST(NnRnnModule, ParameterNamesShapesAndRepr) {
  const auto& meta = rnn_ref().meta;
  std::vector<std::pair<std::string, std::shared_ptr<nn::RNNBase>>> mods{
      {"rnn", std::make_shared<nn::RNN>(10, 20)},
      {"rnn_relu", std::make_shared<nn::RNN>(10, 20, nn::RNNOptions{.nonlinearity = "relu"})},
      {"lstm", std::make_shared<nn::LSTM>(64, 128, nn::RNNOptions{.batch_first = true})},
      {"lstm_full", std::make_shared<nn::LSTM>(5, 7, nn::RNNOptions{.num_layers = 3, .bias = false,
                                                                     .batch_first = true, .dropout = 0.25,
                                                                     .bidirectional = true})},
      {"gru", std::make_shared<nn::GRU>(5, 7, nn::RNNOptions{.num_layers = 2, .bidirectional = true})},
      {"gru_dropout", std::make_shared<nn::GRU>(5, 7, nn::RNNOptions{.num_layers = 2, .dropout = 0.5})},
  };
  for (auto& [key, m] : mods) {
    EXPECT_EQ(m->repr(), meta.at("repr." + key));
    std::string names;
    for (auto& [n, p] : m->named_parameters()) {
      if (!names.empty()) names += ";";
      names += n + ":" + fmt::format("{}", fmt::join(p.sizes().vec(), "x"));
    }
    EXPECT_EQ(names, meta.at("params." + key)) << key;
  }
  EXPECT_EQ(nn::LSTM(64, 128, {.batch_first = true}).repr(), "LSTM(64, 128, batch_first=True)");
}

TEST(NnRnnModule, InitIsUniformInInverseSqrtHidden) {
  manual_seed(0);
  nn::LSTM lstm(8, 25, {.num_layers = 2});
  for (const Tensor& p : lstm.parameters()) {
    EXPECT_LE(p.abs().max().item<float>(), 0.2f);  // 1 / sqrt(25)
    EXPECT_GT(p.abs().max().item<float>(), 0.15f);
  }
  EXPECT_TRUE(lstm.weight_ih(1).is_same(lstm.named_parameters()[4].second));
  EXPECT_FALSE(nn::GRU(3, 4, {.bias = false}).bias_ih(0).defined());
}

TEST(NnRnnModule, UnbatchedInput) {
  manual_seed(1);
  nn::LSTM lstm(3, 4, {.bidirectional = true, .dtype = kFloat64});
  Tensor x = randn({6, 3}, kFloat64);
  auto [y, s] = lstm.forward(x);
  auto [yb, sb] = lstm.forward(x.unsqueeze(1));
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(s.first.sizes().vec(), (std::vector<int64_t>{2, 4}));
  expect_close(y, yb.squeeze(1), "output");
  expect_close(s.second, sb.second.squeeze(1), "c_n");
}

TEST(NnRnnModule, DropoutBetweenLayersOnlyInTraining) {
  manual_seed(2);
  nn::GRU gru(3, 4, {.num_layers = 2, .dropout = 0.5, .dtype = kFloat64});
  Tensor x = randn({5, 2, 3}, kFloat64);
  gru.eval();
  auto [y_eval1, h1] = gru.forward(x);
  auto [y_eval2, h2] = gru.forward(x);
  expect_close(y_eval1, y_eval2, "eval is deterministic");
  gru.train();
  auto [y_train, h3] = gru.forward(x);
  EXPECT_GT((y_train - y_eval1).abs().max().item<double>(), 1e-6);
  // One layer: nothing between layers to drop.
  nn::GRU single(3, 4, {.dropout = 0.5, .dtype = kFloat64});
  auto [a, ha] = single.forward(x);
  auto [b, hb] = single.forward(x);
  expect_close(a, b, "single layer ignores dropout");
}

TEST(NnRnnModule, ErrorsNameTheModuleAndShapes) {
  nn::LSTM lstm(64, 128);
  try {
    lstm.forward(zeros({5, 64}).unsqueeze(0).unsqueeze(0));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("LSTM: input must have 3 dimensions (seq, batch, feature)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("[1, 1, 5, 64]"));
  }
  EXPECT_THROW(lstm.forward(zeros({5, 2, 63})), Error);
  nn::GRU gru(3, 4);
  Tensor x = zeros({5, 2, 3});
  EXPECT_THROW(gru.forward(x, zeros({1, 3, 4})), Error);               // wrong batch in h0
  EXPECT_THROW(gru.forward(x, tensor<int64_t>({5, 6}), Tensor()), Error);  // longer than seq
  EXPECT_THROW(gru.forward(x, tensor<int64_t>({5, 0}), Tensor()), Error);  // empty sequence
  EXPECT_THROW(gru.forward(x, tensor<int64_t>({5, 5, 5}), Tensor()), Error);
  EXPECT_THROW(nn::RNN(3, 4, {.nonlinearity = "sigmoid"}), Error);
  EXPECT_THROW(nn::LSTM(3, 4, {.nonlinearity = "relu"}), Error);
}

// ---- gradcheck: small sizes, float64, every parameter ----

namespace {
void gradcheck_rnn(nn::RNNBase& m, const Tensor& lengths) {
  SCOPED_TRACE(m.repr());
  manual_seed(4);
  const int64_t dirs = m.bidirectional ? 2 : 1;
  Tensor x = randn({3, 2, m.input_size}, kFloat64).requires_grad_();
  Tensor h0 = randn({m.num_layers * dirs, 2, m.hidden_size}, kFloat64).requires_grad_();
  Tensor c0 = randn({m.num_layers * dirs, 2, m.hidden_size}, kFloat64).requires_grad_();
  const bool lstm = dynamic_cast<nn::LSTM*>(&m) != nullptr;
  variable_list inputs{x, h0};
  if (lstm) inputs.push_back(c0);
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  autograd::gradcheck(
      [&](const variable_list& xs) {
        Out o = run(m, xs[0], lengths, xs[1], lstm ? xs[2] : Tensor());
        variable_list outs{o.y, o.hn};
        if (o.cn.defined()) outs.push_back(o.cn);
        return outs;
      },
      inputs);
}
}  // namespace

TEST(NnRnnGradcheck, AllLayersDenseAndPacked) {
  manual_seed(3);
  const nn::RNNOptions opts{.num_layers = 2, .bidirectional = true, .dtype = kFloat64};
  nn::RNN rnn(2, 3, opts);
  nn::LSTM lstm(2, 3, opts);
  nn::GRU gru(2, 3, opts);
  for (nn::RNNBase* m : std::initializer_list<nn::RNNBase*>{&rnn, &lstm, &gru}) {
    gradcheck_rnn(*m, Tensor());
    gradcheck_rnn(*m, tensor<int64_t>({1, 3}));
  }
}

// Inference's fused LSTM step (vec::lstm_cell_f32 in ops/rnn.cpp) gives the
// separate ops' numbers bitwise: the same LSTM under no_grad and with
// gradients on, hidden 20 so every row has a vector tail, with lengths (the
// masked steps) and two layers.
TEST(NnRnnFused, LstmInferenceEqualsTheTrainingOpsBitwise) {
  manual_seed(11);
  nn::LSTM lstm(7, 20, nn::RNNOptions{.num_layers = 2});
  Tensor x = randn({9, 3, 7}), h0 = randn({2, 3, 20}), c0 = randn({2, 3, 20});
  Tensor lengths = tensor<int64_t>({9, 4, 6}, {3}, TensorOptions(kInt64));
  for (bool packed : {false, true}) {
    auto with_grad = packed ? lstm.forward(x, lengths, {h0, c0}) : lstm.forward(x, {h0, c0});
    ASSERT_TRUE(with_grad.first.requires_grad());  // the separate ops ran
    NoGradGuard no_grad;
    auto fused = packed ? lstm.forward(x, lengths, {h0, c0}) : lstm.forward(x, {h0, c0});
    EXPECT_TRUE(equal(fused.first, with_grad.first.detach())) << "packed=" << packed;
    EXPECT_TRUE(equal(fused.second.first, with_grad.second.first.detach())) << "packed=" << packed;
    EXPECT_TRUE(equal(fused.second.second, with_grad.second.second.detach())) << "packed=" << packed;
  }
}

// The zoo's models against their PyTorch 1.13 twins (tests/data/gen_models.py):
// state_dict keys, parameter counts, reprs, outputs and gradients for the
// same weights; shapes, padding independence, errors.
#include <cmath>
#include <memory>
#include <numeric>

#include <gtest/gtest.h>

#include "ember/io/safetensors.h"
#include "ember/train/models.h"
#include "nn/reference.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;
using namespace ember::train;

using ember::testing::keys_of;
using ember::testing::numel_of;

namespace {

struct ModelsReference {
  StateDict tensors;
  safetensors::Metadata meta;
};

const ModelsReference& models_ref() {
  static const ModelsReference r = [] {
    ModelsReference out;
    out.tensors =
        safetensors::load_file(std::string(EMBER_TEST_DATA_DIR) + "/models_reference.safetensors", &out.meta);
    return out;
  }();
  return r;
}

// Reference tensors are stored F32 where exact; compare in float64.
Tensor want(const std::string& key) { return models_ref().tensors.at(key).to(kFloat64); }
Tensor want_int(const std::string& key) { return models_ref().tensors.at(key); }
const std::string& meta(const std::string& key) { return models_ref().meta.at(key); }

// Keys, parameter count and repr equal to the twin's; then the twin's state
// (stored under "<name>.s.") loaded strictly into m, in float64.
void load_twin(nn::Module& m, const std::string& name) {
  EXPECT_EQ(keys_of(m), meta(name + ".keys"));
  EXPECT_EQ(std::to_string(numel_of(m)), meta(name + ".numel"));
  EXPECT_EQ(m.repr(), meta(name + ".repr"));
  m.to(kFloat64);
  StateDict d;
  const std::string prefix = name + ".s.";
  for (const auto& [k, v] : models_ref().tensors)
    if (k.rfind(prefix, 0) == 0) d.insert(k.substr(prefix.size()), v);
  m.load_state_dict(d, true);
}

// The configurations of gen_models.py.
LSTMClassifierOptions lstm_options() {
  return {.vocab_size = 11, .embed_dim = 6, .padding_idx = 0, .cell = "lstm", .hidden = 5, .num_layers = 2,
          .bidirectional = true, .dropout = 0.2, .num_classes = 3};
}
LSTMClassifierOptions gru_options() {
  return {.vocab_size = 11, .embed_dim = 6, .padding_idx = 0, .cell = "gru", .hidden = 5, .num_layers = 1,
          .bidirectional = false, .dropout = 0, .num_classes = 3};
}
TransformerClassifierOptions transformer_options() {
  return {.vocab_size = 11, .d_model = 8, .padding_idx = 0, .max_len = 16, .num_layers = 2, .nhead = 2,
          .dim_feedforward = 12, .dropout = 0.1, .activation = "relu", .num_classes = 3};
}

// tokens padded with zeros (the pad index) from T to `steps`.
Tensor pad_to(const Tensor& tokens, int64_t steps) {
  return cat({tokens, zeros({tokens.size(0), steps - tokens.size(1)}, TensorOptions().dtype(kInt64))}, 1);
}

}  // namespace

// ---- against PyTorch, same weights ----

TEST(TrainModels, MLPMatchesPyTorch) {
  MLP m({.in_features = 12, .hidden = {8, 6}, .out_features = 5, .dropout = 0.1});
  load_twin(m, "mlp");
  m.eval();
  expect_close(m.forward(want("mlp.x")), want("mlp.y"), "mlp output");
}

TEST(TrainModels, CNNMatchesPyTorch) {
  CNN m({.in_channels = 2, .height = 8, .width = 12, .num_classes = 3, .channels = {4, 6}, .hidden = 10});
  load_twin(m, "cnn");
  m.eval();
  expect_close(m.forward(want("cnn.x")), want("cnn.y"), "cnn output");
}

namespace {

// A width-2 ResNet in train mode against gen_models.py's resnet_train_run
// `name`: output, input gradient and the running stats `stats` after.
void expect_resnet_train_run(int64_t depth, const std::string& name, std::initializer_list<const char*> stats) {
  ResNet m({.depth = depth, .in_channels = 3, .num_classes = 5, .width = 2});
  load_twin(m, name);
  m.train();
  Tensor x = want(name + ".x").requires_grad_();
  Tensor y = m.forward(x);
  expect_close(y, want(name + ".y"), name + " output", 1e-9, 1e-11);
  (y * want(name + ".gy")).sum().backward();
  expect_close(x.grad(), want(name + ".gx"), name + " grad of input", 1e-8, 1e-11);
  StateDict s = m.state_dict();
  for (const std::string k : stats) expect_close(s.at(k), want(name + ".after." + k), name + " " + k, 1e-9, 1e-12);
}

}  // namespace

TEST(TrainModels, ResNetMatchesPyTorchInTrainModeWithInputGradient) {
  expect_resnet_train_run(18, "resnet", {"bn1.running_mean", "bn1.running_var", "layer2.0.downsample.1.running_var",
                                         "layer4.1.bn2.running_mean"});
}

// ResNet-8 (6n + 2, n = 1: three stages, no layer4) against its PyTorch twin.
TEST(TrainModels, CifarResNetMatchesPyTorchInTrainModeWithInputGradient) {
  EXPECT_EQ(ResNet({.depth = 8, .width = 2}).layer4, nullptr);
  expect_resnet_train_run(8, "resnet8", {"bn1.running_var", "layer3.0.downsample.1.running_mean",
                                         "layer3.0.bn2.running_var"});
}

TEST(TrainModels, LSTMClassifierMatchesPyTorchWithGradients) {
  LSTMClassifier m(lstm_options());
  load_twin(m, "lstm");
  m.eval();
  Tensor y = m.forward(want_int("lstm.tokens"), want_int("lstm.lengths"));
  expect_close(y, want("lstm.y"), "lstm output");
  (y * want("lstm.gy")).sum().backward();
  for (auto& [k, p] : m.named_parameters()) expect_close(p.grad(), want("lstm.g." + k), "lstm grad of " + k);
}

TEST(TrainModels, GRUClassifierMatchesPyTorch) {
  LSTMClassifier m(gru_options());
  load_twin(m, "gru");
  m.eval();
  expect_close(m.forward(want_int("gru.tokens"), want_int("gru.lengths")), want("gru.y"), "gru output");
}

TEST(TrainModels, TransformerClassifierMatchesPyTorchWithGradients) {
  TransformerClassifier m(transformer_options());
  load_twin(m, "transformer");
  m.eval();
  Tensor y = m.forward_sample(data::Sample(want_int("transformer.tokens"), want_int("transformer.lengths")));
  expect_close(y, want("transformer.y"), "transformer output", 1e-9, 1e-11);
  (y * want("transformer.gy")).sum().backward();
  for (auto& [k, p] : m.named_parameters())
    expect_close(p.grad(), want("transformer.g." + k), "transformer grad of " + k, 1e-8, 1e-11);
}

// ---- full-size models: names, counts and reprs of the twins ----

TEST(TrainModels, W1CNNIsTheAnchorModel) {
  CNN m(CNNOptions{});
  EXPECT_EQ(keys_of(m), meta("w1.keys"));
  EXPECT_EQ(numel_of(m), 421834);
  EXPECT_EQ(std::to_string(numel_of(m)), meta("w1.numel"));
  EXPECT_EQ(m.repr(), meta("w1.repr"));
  EXPECT_EQ(m.forward(zeros({2, 1, 28, 28})).sizes().vec(), (std::vector<int64_t>{2, 10}));
}

int64_t count_blocks(const ResNet& r) {
  int64_t n = 0;
  for (const auto& m : r.modules()) n += dynamic_cast<const BasicBlock*>(m.get()) != nullptr;
  return n;
}

TEST(TrainModels, ResNetKeysCountsAndReprAreTorchvisions) {
  ResNet r18(ResNetOptions{});
  EXPECT_EQ(keys_of(r18), meta("resnet18.keys"));
  EXPECT_EQ(numel_of(r18), 11173962);
  EXPECT_EQ(r18.repr(), meta("resnet18.repr"));
  // torchvision's init: convolutions ~ N(0, 2 / fan_out), no bias; BatchNorm weight 1.
  const double he_std = std::sqrt(2.0 / (64 * 3 * 3));
  EXPECT_NEAR(r18.layer1->get_submodule("0.conv1")->state_dict().at("weight").std().item<double>(), he_std,
              0.03 * he_std);
  EXPECT_EQ(r18.bn1->weight.sum().item<double>(), 64.0);
  ResNet r34({.depth = 34});
  EXPECT_EQ(keys_of(r34), meta("resnet34.keys"));
  EXPECT_EQ(std::to_string(numel_of(r34)), meta("resnet34.numel"));
  // ResNet-20 (He et al. 2016, 4.2): 16-32-64 channels, 3 blocks per stage.
  // The paper's 0.27M parameters (269,722 with zero-padding shortcuts) plus
  // the two 1x1 projections and their BatchNorms: 512 + 64 + 2,048 + 128.
  ResNet r20({.depth = 20});
  EXPECT_EQ(keys_of(r20), meta("resnet20.keys"));
  EXPECT_EQ(numel_of(r20), 269722 + 512 + 64 + 2048 + 128);
  EXPECT_EQ(std::to_string(numel_of(r20)), meta("resnet20.numel"));
  EXPECT_EQ(r20.repr(), meta("resnet20.repr"));
  const double he_std20 = std::sqrt(2.0 / (64 * 3 * 3));
  EXPECT_NEAR(r20.layer3->get_submodule("2.conv2")->state_dict().at("weight").std().item<double>(), he_std20,
              0.03 * he_std20);
  EXPECT_EQ(r20.forward(zeros({2, 3, 32, 32})).sizes().vec(), (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(count_blocks(ResNet({.depth = 56})), 27);
  EXPECT_EQ(count_blocks(ResNet({.depth = 110, .width = 1})), 54);
}

TEST(TrainModels, MLPDefaultLayoutAndRepr) {
  MLP m({.in_features = 784, .out_features = 10});
  EXPECT_EQ(keys_of(m), meta("mlp_default.keys"));
  EXPECT_EQ(std::to_string(numel_of(m)), meta("mlp_default.numel"));
  EXPECT_EQ(m.repr(), meta("mlp_default.repr"));
  EXPECT_EQ(m.forward(zeros({3, 1, 28, 28})).sizes().vec(), (std::vector<int64_t>{3, 10}));
}

// ---- shapes and behaviour ----

TEST(TrainModels, OutputShapes) {
  ResNet r({.in_channels = 3, .num_classes = 7, .width = 4});
  EXPECT_EQ(r.forward(zeros({2, 3, 32, 32})).sizes().vec(), (std::vector<int64_t>{2, 7}));
  r.eval();  // batch 1 at 8x8 leaves one value per channel in layer4: no batch statistics (as in PyTorch)
  EXPECT_EQ(r.forward(zeros({1, 3, 8, 8})).sizes().vec(), (std::vector<int64_t>{1, 7}));
  Tensor tokens = ones({3, 6}, TensorOptions().dtype(kInt64));
  Tensor lengths = tensor<int64_t>({6, 2, 4});
  auto lstm_opts = lstm_options();
  LSTMClassifier lstm(lstm_opts);
  EXPECT_EQ(lstm.forward(tokens, lengths).sizes().vec(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(lstm.forward(tokens).sizes().vec(), (std::vector<int64_t>{3, 3}));
  TransformerClassifier tr(transformer_options());
  EXPECT_EQ(tr.forward(tokens, lengths).sizes().vec(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(tr.forward_sample(data::Sample(tokens)).sizes().vec(), (std::vector<int64_t>{3, 3}));
}

TEST(TrainModels, TextModelsDoNotDependOnPadding) {
  Tensor tokens = want_int("lstm.tokens"), lengths = want_int("lstm.lengths");
  ASSERT_EQ(tokens.size(1), 5);
  for (const auto& opts : {lstm_options(), gru_options()}) {
    SCOPED_TRACE(opts.cell);
    LSTMClassifier m(opts);
    m.to(kFloat64);
    m.eval();
    expect_close(m.forward(pad_to(tokens, 9), lengths), m.forward(tokens, lengths), "padded to 9 vs 5");
  }
  TransformerClassifier t(transformer_options());
  t.to(kFloat64);
  t.eval();
  expect_close(t.forward(pad_to(tokens, 9), lengths), t.forward(tokens, lengths), "transformer padded to 9 vs 5");
  // A full-length sequence gives the same result with or without lengths.
  Tensor full = tensor<int64_t>({5, 5, 5, 5});
  expect_close(t.forward(tokens), t.forward(tokens, full), "transformer without lengths");
  LSTMClassifier m(lstm_options());
  m.to(kFloat64);
  m.eval();
  expect_close(m.forward(tokens), m.forward(tokens, full), "lstm without lengths");
}

TEST(TrainModels, ForwardSampleTakesTokensAndLengths) {
  LSTMClassifier m(gru_options());
  m.eval();
  Tensor tokens = want_int("gru.tokens"), lengths = want_int("gru.lengths");
  SampleModule& sm = m;
  expect_close(sm.forward_sample(data::Sample::tuple({data::Sample(tokens), data::Sample(lengths)})),
               m.forward(tokens, lengths), "forward_sample");
  expect_error([&] { sm.forward_sample(data::Sample::tuple({data::Sample(tokens)})); },
               {"LSTMClassifier", "lengths"});
}

TEST(TrainModels, ErrorsNameTheModelAndShapes) {
  CNN cnn(CNNOptions{});
  expect_error([&] { cnn.forward(zeros({2, 3, 32, 32})); }, {"CNN", "[B, 1, 28, 28]", "[2, 3, 32, 32]"});
  expect_error([] { CNN({.height = 30}); }, {"CNN", "multiples of 4", "30x28"});
  expect_error([] { ResNet({.depth = 50}); }, {"ResNet", "18, 34 or 6n + 2", "50"});
  expect_error([] { ResNet({.depth = 21}); }, {"ResNet", "18, 34 or 6n + 2", "21"});
  MLP mlp({.in_features = 12, .hidden = {4}, .out_features = 2});
  expect_error([&] { mlp.forward(zeros({2, 13})); }, {"MLP", "12", "[2, 13]"});
  LSTMClassifier lstm(lstm_options());
  Tensor tokens = ones({2, 4}, TensorOptions().dtype(kInt64));
  expect_error([&] { lstm.forward(tokens, tensor<int64_t>({5, 1})); }, {"LSTMClassifier", "[1, 4]", "5"});
  expect_error([&] { lstm.forward(zeros({2, 4}), tensor<int64_t>({1, 1})); }, {"LSTMClassifier", "int64 [B, T]"});
  expect_error([] { LSTMClassifier({.vocab_size = 5, .cell = "rnn"}); }, {"lstm", "gru", "rnn"});
  TransformerClassifier tr(transformer_options());
  expect_error([&] { tr.forward(ones({1, 17}, TensorOptions().dtype(kInt64))); }, {"max_len 16", "17"});
}

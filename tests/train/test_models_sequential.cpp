// model.name=sequential: layers from the config, their inferred sizes,
// nn.Sequential's state_dict keys, closed-form parameter counts, the
// lengths-aware recurrent output, errors, and a short training run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/ember.h"
#include "ember/io/atomic_file.h"
#include "ember/train/config.h"
#include "ember/train/models_sequential.h"
#include "ember/train/report.h"
#include "ember/train/trainer.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

using ember::testing::keys_of;
using ember::testing::numel_of;
namespace {

DataInfo images(int64_t c, int64_t h, int64_t w, int64_t classes) {
  DataInfo info;
  info.input_shape = {c, h, w};
  info.num_classes = classes;
  return info;
}

DataInfo tabular(int64_t features, int64_t classes) {
  DataInfo info;
  info.input_shape = {features};
  info.num_classes = classes;
  return info;
}

std::string write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kSmallCnn = R"(model:
  name: sequential
  layers:
    - conv2d: {out_channels: 8, kernel_size: 3, padding: 1}
    - batch_norm2d: {}
    - relu
    - max_pool2d: {kernel_size: 2}
    - flatten
    - dropout: {p: 0.3}
    - linear: {out_features: 10}
)";

}  // namespace

// A block-style YAML list in a config file: keys, counts and shapes of the
// same nn.Sequential in PyTorch (in_channels / in_features inferred).
TEST(SequentialModel, ConvNetFromAConfigFile) {
  Config c = load_config(write_temp("ember_seq_cnn.yaml", kSmallCnn), {});
  nn::ModulePtr m = build_model(c, images(1, 28, 28, 10));
  EXPECT_EQ(keys_of(*m), "0.weight,0.bias,1.weight,1.bias,1.running_mean,1.running_var,1.num_batches_tracked,"
                         "6.weight,6.bias");
  // conv 8*1*3*3 + 8, batch norm 2*8, linear (8*14*14)*10 + 10.
  EXPECT_EQ(numel_of(*m), (8 * 9 + 8) + 16 + (8 * 14 * 14 * 10 + 10));
  Tensor y = m->forward(randn({5, 1, 28, 28}));
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{5, 10}));
  // The resolved config (config.yaml) reads back to the same layers.
  Config back = config_from_yaml(c.to_yaml(), "config.yaml");
  EXPECT_EQ(back.get_string("model.layers"), c.get_string("model.layers"));
  EXPECT_EQ(keys_of(*build_model(back, images(1, 28, 28, 10))), keys_of(*m));
}

// Explicit input sizes are accepted when they agree; strides, pairs, "same".
TEST(SequentialModel, ExplicitSizesPairsAndSamePadding) {
  std::string layers = "[{conv2d: {in_channels: 3, out_channels: 4, kernel_size: [3, 5], padding: same}},"
                       " {conv2d: {out_channels: 6, kernel_size: 2, stride: 2, bias: false}}, gelu,"
                       " {adaptive_avg_pool2d: {output_size: 1}}, flatten,"
                       " {linear: {in_features: 6, out_features: 3}}]";
  auto m = build_sequential(layers, images(3, 8, 8, 3));
  EXPECT_EQ(numel_of(*m), (4 * 3 * 15 + 4) + (6 * 4 * 4) + (6 * 3 + 3));
  EXPECT_EQ(m->forward(randn({2, 3, 8, 8})).sizes().vec(), (std::vector<int64_t>{2, 3}));
  // PyTorch's padding_mode, passed through to nn::Conv2d.
  auto r = build_sequential("[{conv2d: {out_channels: 2, kernel_size: 3, padding: 1, padding_mode: reflect}},"
                            " flatten, {linear: {out_features: 3}}]",
                            images(1, 8, 8, 3));
  EXPECT_NE(r->repr().find("padding_mode=reflect"), std::string::npos) << r->repr();
}

// residual: x + f(x), its layers numbered under the block ("1.0.weight").
TEST(SequentialModel, ResidualBlockAddsItsInput) {
  auto m = build_sequential("[{linear: {out_features: 16}}, {residual: [{linear: {out_features: 16}}, tanh]},"
                            " {linear: {out_features: 2}}]",
                            tabular(4, 2));
  EXPECT_EQ(keys_of(*m), "0.weight,0.bias,1.0.weight,1.0.bias,2.weight,2.bias");
  EXPECT_EQ(numel_of(*m), (4 * 16 + 16) + (16 * 16 + 16) + (16 * 2 + 2));
  NoGradGuard no_grad;
  Tensor x = randn({3, 4});
  auto children = m->named_children();
  Tensor h = children[0].second->forward(x);
  auto block = children[1].second->named_children();
  Tensor f = tanh(block[0].second->forward(h));
  Tensor want = children[2].second->forward(h + f);
  EXPECT_TRUE(allclose(m->forward(x), want, 1e-6, 1e-6));
}

// embedding -> lstm -> linear on token ids: num_embeddings from the data's
// vocabulary, the LSTM's feature is h_n of the last layer at each sequence's
// own length (the same as running the unpadded sequence alone).
TEST(SequentialModel, RecurrentLayersUseTheLengths) {
  DataInfo info;
  info.vocab_size = 20;
  info.pad_index = 0;
  info.num_classes = 3;
  for (const char* cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    auto m = build_sequential(fmt::format("[{{embedding: {{embedding_dim: 5}}}}, {{{}: {{hidden_size: 7}}}},"
                                          " {{linear: {{out_features: 3}}}}]", cell),
                              info);
    const int64_t gates = std::string(cell) == "lstm" ? 4 : 3;
    EXPECT_EQ(numel_of(*m), 20 * 5 + gates * (7 * 5 + 7 * 7 + 2 * 7) + (7 * 3 + 3));
    EXPECT_EQ(keys_of(*m), "0.weight,1.weight_ih_l0,1.weight_hh_l0,1.bias_ih_l0,1.bias_hh_l0,2.weight,2.bias");
    NoGradGuard no_grad;
    Tensor tokens = tensor(std::vector<int64_t>{3, 4, 5, 0, 0, 6, 7, 8, 9, 1}).view({2, 5});
    Tensor lengths = tensor(std::vector<int64_t>{3, 5});
    Tensor padded = m->forward_sample(data::Sample(tokens, lengths));
    EXPECT_EQ(padded.sizes().vec(), (std::vector<int64_t>{2, 3}));
    Tensor alone = m->forward(tokens.narrow(0, 0, 1).narrow(1, 0, 3));
    EXPECT_TRUE(allclose(padded.narrow(0, 0, 1), alone, 1e-5, 1e-6));
    Tensor full = m->forward(tokens.narrow(0, 1, 1));
    EXPECT_TRUE(allclose(padded.narrow(0, 1, 1), full, 1e-5, 1e-6));
  }
}

TEST(SequentialModel, ErrorsNameTheLayerTheKeyAndTheChoices) {
  DataInfo img = images(1, 8, 8, 10);
  expect_error([&] { build_sequential("[relu, {conv3d: {out_channels: 4}}]", img); },
               {"model.layers[1]", "unknown layer 'conv3d'", "did you mean 'conv2d'", "max_pool2d", "residual"});
  expect_error([&] { build_sequential("[{conv2d: {out_channels: 4, kernal_size: 3}}]", img); },
               {"model.layers[0] (conv2d)", "unknown argument 'kernal_size'", "did you mean 'kernel_size'",
                "in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias"});
  expect_error([&] { build_sequential("[{conv2d: {out_channels: 4, kernel_size: 3, padding_mode: mirror}}]", img); },
               {"model.layers[0] (conv2d)", "argument 'padding_mode' must be one of zeros, reflect, replicate, circular",
                "got 'mirror'"});
  expect_error([&] { build_sequential("[{conv2d: {out_channels: 4}}]", img); },
               {"model.layers[0] (conv2d)", "missing argument 'kernel_size'"});
  expect_error([&] { build_sequential("[{conv2d: {in_channels: 3, out_channels: 4, kernel_size: 3}}]", img); },
               {"model.layers[0] (conv2d)", "in_channels=3 does not match its input, which has 1"});
  expect_error([&] { build_sequential("[flatten, {conv2d: {out_channels: 4, kernel_size: 3}}]", img); },
               {"model.layers[1] (conv2d)", "expects input [N, C, H, W]", "[2, 64]"});
  expect_error([&] { build_sequential("[{max_pool2d: {kernel_size: 16}}, flatten, {linear: {out_features: 10}}]",
                                      img); },
               {"model.layers[0] (max_pool2d)", "does not fit its input [2, 1, 8, 8]"});
  expect_error([&] { build_sequential("[flatten, {residual: [{linear: {out_features: 3}}]}]", img); },
               {"model.layers[1] (residual)", "[2, 64] to [2, 3]", "the same shape"});
  expect_error([&] { build_sequential("[flatten, {residual: [relu, {lstm: {hidden_size: 3}}]}]", img); },
               {"model.layers[1].residual[1] (lstm)", "expects input [N, T, features]"});
  expect_error([&] { build_sequential("[flatten, {linear: {out_features: 7}}]", img); },
               {"model.layers", "gives [2, 7]", "needs [2, 10]", "out_features: 10"});
  expect_error([&] { build_sequential("[flatten, {dropout: {p: 1.5}}, {linear: {out_features: 10}}]", img); },
               {"model.layers[1] (dropout)"});
  expect_error([&] { build_sequential("[flatten, {linear: {out_features: ten}}]", img); },
               {"model.layers[1] (linear)", "'out_features' expects an integer, got 'ten'"});
  expect_error([&] { build_sequential("", img); }, {"model.layers", "needs a list of layers"});
  expect_error([&] { build_sequential("[flatten, {linear: {}, relu: {}}]", img); },
               {"model.layers[1]", "a layer is a name"});
  // Through the config: a ConfigError (the CLI exits 2).
  Config c = load_config("", {"model.name=sequential", "model.layers=[flaten]"});
  EXPECT_THROW(build_model(c, img), ConfigError);
}

// Only `layers` keeps a list of mappings; other lists stay plain.
TEST(SequentialModel, OnlyLayersHoldsMappings) {
  auto entries = flatten_yaml("model:\n  layers:\n    - relu\n    - linear: {out_features: 3}\n", "l.yaml");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].key, "model.layers");
  EXPECT_EQ(entries[0].text, "[relu, {linear: {out_features: 3}}]");
  EXPECT_THROW(flatten_yaml("model:\n  hidden: [{a: 1}]\n", "h.yaml"), ConfigError);
}

// A tiny sequential CNN trains on a slice of Fashion-MNIST: the loss falls.
TEST(SequentialModel, TrainsEndToEnd) {
  fs::path dir = fs::temp_directory_path() / "ember_seq_train";
  fs::remove_all(dir);
  Config c = load_config(write_temp("ember_seq_train.yaml", kSmallCnn),
                         {"data.limit_train=600", "data.limit_test=200", "data.val_fraction=0.2", "data.batch_size=50",
                          "data.num_workers=0", "train.epochs=3", "train.threads=2", "log.progress=none"});
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  opt.run_dir = dir.string();
  TrainResult r = Trainer(std::move(c), opt).fit();
  ASSERT_TRUE(r.finished);
  MetricsTable t = MetricsTable::from_csv(io::read_file((dir / "metrics.csv").string()), "metrics.csv");
  std::vector<double> loss = t.column("train_loss");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_LT(loss.back(), loss.front());
  std::map<std::string, double> m(r.test_metrics.begin(), r.test_metrics.end());
  EXPECT_GT(m["test_acc"], 0.5);  // chance is 0.1
}

// model.init_from (issue 16): weights PyTorch trained, loaded into the zoo
// model, predict what PyTorch predicted for every Fashion-MNIST test image.
// tests/data/pytorch/w1_cnn_trained.pt and its test predictions come from
// tests/data/gen_pytorch_trained.py (torch 1.13: W1 CNN, 2 epochs on 12,000
// images; PyTorch's test accuracy 0.8671, 8,671 of 10,000).
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_util.h"
#include "ember/io/safetensors.h"
#include "ember/train/config.h"
#include "ember/train/data_setup.h"
#include "ember/train/zoo.h"
#include "test_util.h"
#include "train/init_from.h"

using namespace ember;
using ember::testing::contains;
using ember::testing::run_cli;

namespace {

std::string data_file(const std::string& name) { return std::string(EMBER_TEST_DATA_DIR) + "/pytorch/" + name; }
std::string cnn_config() { return std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_cnn.yaml"; }

}  // namespace

TEST(InitFrom, PyTorchTrainedCnnPredictsEveryTestImageAsPyTorchDid) {
  train::Config c = train::load_config(cnn_config(), {});
  train::DataBundle data = train::build_data(c);
  nn::ModulePtr model = train::build_model(c, data.info);
  train::load_initial_weights(*model, data_file("w1_cnn_trained.pt"));
  model->eval();
  NoGradGuard no_grad;

  StateDict want = safetensors::load_file(data_file("w1_cnn_trained_test.safetensors"));
  std::vector<int64_t> torch_pred = want.at("predictions").to(kInt64).to_vector<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(torch_pred.size()), data.test->size());

  int64_t correct = 0, differ = 0;
  const int64_t n = data.test->size(), batch = 500;
  for (int64_t b = 0; b < n; b += batch) {
    std::vector<Tensor> xs, ys;
    for (int64_t i = b; i < std::min(n, b + batch); ++i) {
      data::Sample s = data.test->get(i);
      xs.push_back(s[0].tensor());
      ys.push_back(s[1].tensor());
    }
    std::vector<int64_t> pred = model->forward(stack(xs)).argmax(1).to_vector<int64_t>();
    std::vector<int64_t> label = stack(ys).to(kInt64).to_vector<int64_t>();
    for (size_t i = 0; i < pred.size(); ++i) {
      correct += pred[i] == label[i];
      differ += pred[i] != torch_pred[static_cast<size_t>(b) + i];
    }
  }
  EXPECT_EQ(differ, 0) << "test images Ember classifies differently from PyTorch";
  EXPECT_EQ(correct, want.at("correct").item<int64_t>());
  EXPECT_EQ(correct, 8671);
}

TEST(InitFrom, EvalOfAConfigWithPyTorchWeightsPrintsPyTorchsAccuracy) {
  auto r = run_cli("eval " + cnn_config() + " model.init_from=" + data_file("w1_cnn_trained.pt"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n  test_acc +0\\.867100\n"))) << r.output;
}

TEST(InitFrom, WeightsThatDoNotFitOrCannotBeReadExitWith2NamingTheFile) {
  const std::string pt = data_file("w1_cnn_trained.pt");
  auto mlp = run_cli("eval " + cnn_config() + " model.name=mlp model.init_from=" + pt);
  EXPECT_EQ(mlp.code, 2) << mlp.output;
  EXPECT_TRUE(contains(mlp.output, "model.init_from: '" + pt + "' does not fit the model")) << mlp.output;

  auto missing = run_cli("eval " + cnn_config() + " model.init_from=/nonexistent/w.pt");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.output, "model.init_from: '/nonexistent/w.pt' is not a file")) << missing.output;

  auto wrong_kind = run_cli("eval " + cnn_config() + " model.init_from=" + cnn_config());
  EXPECT_EQ(wrong_kind.code, 2);
  EXPECT_TRUE(contains(wrong_kind.output, "expected a PyTorch state_dict (.pt, .pth, .bin)")) << wrong_kind.output;

  // A malicious pickle is refused by the loader, and the message says which file.
  const std::string evil = data_file("evil_os_system.pt");
  auto bad = run_cli("eval " + cnn_config() + " model.init_from=" + evil);
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.output, "model.init_from: cannot read '" + evil + "'")) << bad.output;

  auto none = run_cli("eval " + cnn_config());
  EXPECT_EQ(none.code, 2);
  EXPECT_TRUE(contains(none.output, "add model.init_from=WEIGHTS")) << none.output;
}

// Fine-tuning starts from the PyTorch weights: with lr 1e-12 (the config
// refuses 0) on a small slice the weights stay PyTorch's (only BatchNorm's running statistics move), so the
// first epoch's validation accuracy is that of a trained model, not chance.
TEST(InitFrom, TrainingStartsFromTheWeights) {
  const auto root = std::filesystem::temp_directory_path() / "ember_init_from_test";
  std::filesystem::remove_all(root);
  auto r = run_cli("train " + cnn_config() + " model.init_from=" + data_file("w1_cnn_trained.pt") +
                   " optim.lr=1e-12 schedule.name=none schedule.warmup_epochs=0 train.epochs=1 data.limit_train=2000 "
                   "data.limit_test=500 data.num_workers=0 log.root=" + root.string() + " log.name=init");
  ASSERT_EQ(r.code, 0) << r.output;
  std::filesystem::path run;
  for (const auto& e : std::filesystem::directory_iterator(root)) run = e.path();  // root/init-<time>
  std::ifstream csv(run / "metrics.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  // Columns: epoch, train_loss, train_acc, lr, val_loss, val_acc, ...
  std::vector<std::string> cells;
  std::stringstream ss(row);
  for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
  ASSERT_GE(cells.size(), 6u) << row;
  EXPECT_GT(std::stod(cells[5]), 0.75) << "val_acc after one lr-1e-12 epoch from PyTorch's weights: " << row;
  std::filesystem::remove_all(root);
}

// A hand-written training loop in PyTorch's words, through <ember/ember.h>
// alone: TensorDataset, random_split, DataLoader with `auto& [x, y]`,
// optim::Adam(params, lr), nn::utils::clip_grad_norm_, model->to(device),
// std::cout << model, train::ClassificationMetrics, and a checkpoint saved
// with train::save_checkpoint and read back. README.md shows this loop.
//
//   build/examples/example_training_loop [CHECKPOINT]   (default: training_loop.ckpt)
// Exits 1 when the validation accuracy stays under 90%.
#include <cstdio>
#include <iostream>

#include "ember/ember.h"

using namespace ember;

int main(int argc, char** argv) {
  const std::string ckpt_path = argc > 1 ? argv[1] : "training_loop.ckpt";
  manual_seed(0);
  // Two Gaussian blobs: class 1 is shifted by +2 in every feature.
  Tensor y = (rand({1000}) < 0.5).to(kInt64);
  Tensor X = randn({1000, 4}) + y.unsqueeze(1).to(kFloat32) * 2;
  auto dataset = std::make_shared<data::TensorDataset>(X, y);
  auto splits = data::random_split(dataset, {0.8, 0.2});
  data::DataLoader train_loader(splits[0], data::DataLoaderOptions{}.with_batch_size(32).with_shuffle(true));
  data::DataLoader val_loader(splits[1], data::DataLoaderOptions{}.with_batch_size(100));

  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(4, 16), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(16, 2)});
  model->to(kCPU);
  std::cout << model << "\n";
  optim::Adam optimizer(model->parameters(), 1e-2);

  train::ClassificationMetrics metrics(2);
  for (int epoch = 0; epoch < 5; ++epoch) {
    model->train();
    for (auto& [x, target] : train_loader) {
      optimizer.zero_grad();
      Tensor loss = nn::functional::cross_entropy(model->forward(x), target);
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
    }
    model->eval();
    NoGradGuard no_grad;
    metrics.reset();
    for (auto& [x, target] : val_loader) metrics.update(model->forward(x), target);
    std::printf("epoch %d: val accuracy %.3f\n", epoch + 1, metrics.accuracy());
  }

  train::Checkpoint ckpt;
  ckpt.model = model->state_dict();
  ckpt.optimizer = optimizer.state_dict();
  ckpt.epoch = 5;
  train::save_checkpoint(ckpt, ckpt_path);
  // Later: rebuild the model and the optimizer, then restore both.
  train::Checkpoint back = train::load_checkpoint(ckpt_path);
  model->load_state_dict(back.model);
  optimizer.load_state_dict(back.optimizer);
  std::printf("restored epoch %lld from %s\n", static_cast<long long>(back.epoch), ckpt_path.c_str());
  return metrics.accuracy() >= 0.9 ? 0 : 1;
}

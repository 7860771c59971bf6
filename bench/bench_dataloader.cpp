// Data-loading throughput: one Fashion-MNIST training epoch through
// ToTensor + RandomCrop(28, padding 4) + RandomHorizontalFlip + Normalize,
// batch 128, 2 worker threads; prints images/s per epoch and the median as
// JSON. bench/torch/dataloader.py is the PyTorch + torchvision twin.
// --feed also times a consumer doing a fixed matmul step per batch and
// reports the fraction of the epoch it spent waiting for data.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/data/data.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::data;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

int main(int argc, char** argv) {
  int epochs = 3, workers = 2;
  bool feed = false;
  std::string root = kDebianFashionMnistRoot;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--epochs" && i + 1 < argc) epochs = std::atoi(argv[++i]);
    else if (a == "--workers" && i + 1 < argc) workers = std::atoi(argv[++i]);
    else if (a == "--root" && i + 1 < argc) root = argv[++i];
    else if (a == "--feed") feed = true;
    else if (a.rfind("--benchmark", 0) == 0) continue;  // tolerate Google Benchmark flags
    else {
      std::fprintf(stderr, "usage: %s [--epochs N] [--workers N] [--root DIR] [--feed]\n", argv[0]);
      return 2;
    }
  }
  set_num_threads(1);  // the consumer's ops stay on one thread; workers are the parallelism

  auto train = std::make_shared<FashionMNIST>(root, true);
  auto transform = std::make_shared<transforms::Compose>(std::vector<TransformPtr>{
      std::make_shared<transforms::ToTensor>(),
      std::make_shared<transforms::RandomCrop>(28, 4),
      std::make_shared<transforms::RandomHorizontalFlip>(),
      std::make_shared<transforms::Normalize>(std::vector<double>{0.2860}, std::vector<double>{0.3530})});
  auto dataset = std::make_shared<TransformedDataset>(train, transform, /*seed=*/0);
  DataLoader loader(dataset, DataLoaderOptions()
                                 .with_batch_size(128)
                                 .with_shuffle(true)
                                 .with_num_workers(workers)
                                 .with_prefetch_factor(2));
  Tensor weight = randn({784, 512});
  std::vector<double> rates, waits;
  for (int e = 0; e < epochs; ++e) {
    int64_t images = 0;
    double wait = 0;
    auto t0 = Clock::now();
    auto tw = Clock::now();
    for (auto it = loader.begin(); it != loader.end();) {
      wait += seconds_since(tw);
      const Tensor& x = (*it)[0].tensor();
      images += x.size(0);
      if (feed) (void)x.reshape({x.size(0), 784}).matmul(weight).relu().sum().item<double>();
      tw = Clock::now();
      ++it;
    }
    wait += seconds_since(tw);
    double s = seconds_since(t0);
    rates.push_back(static_cast<double>(images) / s);
    waits.push_back(wait / s);
    std::printf("epoch %d: %lld images in %.3f s, %.0f images/s%s\n", e, static_cast<long long>(images), s,
                rates.back(), feed ? fmt::format(", waiting for data {:.1f}%", 100 * waits.back()).c_str() : "");
  }
  std::printf("{\"bench\": \"dataloader\", \"framework\": \"ember\", \"workers\": %d, \"images_per_s\": %.1f%s}\n",
              workers, median(rates), feed ? fmt::format(", \"wait_fraction\": {:.4f}", median(waits)).c_str() : "");
  return 0;
}

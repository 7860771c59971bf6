// DataLoader: batching, determinism across num_workers, epochs, collate, worker errors.
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "ember/data/data.h"
#include "test_util.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

// (image float [1, 4, 4] filled with i, label i % 3); sleeps a random few
// microseconds so workers finish out of order.
class Jittery : public Dataset {
 public:
  explicit Jittery(int64_t n, int64_t fail_at = -1) : n_(n), fail_at_(fail_at) {}
  int64_t size() const override { return n_; }
  Sample get(int64_t i) const override {
    thread_local std::mt19937 rng(std::hash<std::thread::id>()(std::this_thread::get_id()));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    EMBER_CHECK(i != fail_at_, "corrupt record {}", i);
    return Sample(full({1, 4, 4}, static_cast<double>(i)), scalar_tensor(i % 3, kInt64));
  }

 private:
  int64_t n_, fail_at_;
};

// Every batch of one epoch, flattened to doubles (images then labels).
std::vector<std::vector<double>> epoch_content(DataLoader& loader) {
  std::vector<std::vector<double>> out;
  for (Sample& batch : loader) {
    std::vector<double> v = batch[0].tensor().to_vector<double>();
    std::vector<double> l = batch[1].tensor().to_vector<double>();
    v.insert(v.end(), l.begin(), l.end());
    out.push_back(std::move(v));
  }
  return out;
}

DatasetPtr augmented(int64_t n) {
  auto base = std::make_shared<Jittery>(n);
  auto t = std::make_shared<transforms::Compose>(std::vector<TransformPtr>{
      std::make_shared<transforms::RandomCrop>(4, 2),
      std::make_shared<transforms::RandomHorizontalFlip>(),
      std::make_shared<transforms::RandomErasing>(0.5)});
  return std::make_shared<TransformedDataset>(base, t, 99);
}

}  // namespace

TEST(DataLoader, BatchesInSamplerOrder) {
  auto ds = std::make_shared<TensorDataset>(
      std::vector<Tensor>{arange(10).reshape({10, 1}).to(kFloat32), arange(10)});
  DataLoader loader(ds, DataLoaderOptions().with_batch_size(4));
  EXPECT_EQ(loader.size(), 3);
  std::vector<std::vector<int64_t>> labels;
  for (auto& b : loader) {
    EXPECT_EQ(b[0].tensor().dim(), 2);
    labels.push_back(b[1].tensor().to_vector<int64_t>());
  }
  EXPECT_EQ(labels, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  DataLoader dropping(ds, DataLoaderOptions().with_batch_size(4).with_drop_last(true));
  EXPECT_EQ(dropping.size(), 2);
  int count = 0;
  for (auto& b : dropping) count += static_cast<int>(b[1].tensor().numel());
  EXPECT_EQ(count, 8);
}

TEST(DataLoader, IdenticalBatchesForAnyNumWorkers) {
  std::vector<std::vector<std::vector<double>>> per_workers;
  for (int workers : {0, 1, 4}) {
    DataLoader loader(augmented(50), DataLoaderOptions()
                                         .with_batch_size(6)
                                         .with_shuffle(true)
                                         .with_seed(5)
                                         .with_num_workers(workers)
                                         .with_prefetch_factor(workers == 4 ? 1 : 2));
    auto e0 = epoch_content(loader);
    auto e1 = epoch_content(loader);  // the loader advances to epoch 1 by itself
    EXPECT_EQ(e0.size(), 9u);
    EXPECT_NE(e0, e1) << "epoch 1 must reshuffle and re-augment";
    loader.set_epoch(0);
    EXPECT_EQ(epoch_content(loader), e0) << "set_epoch(0) must repeat epoch 0";
    e0.insert(e0.end(), e1.begin(), e1.end());
    per_workers.push_back(std::move(e0));
  }
  EXPECT_EQ(per_workers[0], per_workers[1]);
  EXPECT_EQ(per_workers[0], per_workers[2]);
}

TEST(DataLoader, ShuffleCoversEverySampleOnce) {
  auto ds = std::make_shared<Jittery>(37);
  DataLoader loader(ds, DataLoaderOptions().with_batch_size(5).with_shuffle(true).with_num_workers(3));
  std::vector<int64_t> seen;
  for (auto& b : loader) {
    auto v = b[0].tensor().select(1, 0).select(1, 0).select(1, 0).to_vector<double>();
    for (double x : v) seen.push_back(static_cast<int64_t>(x));
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 37u);
  for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

TEST(DataLoader, WorkerExceptionNamesSampleIndex) {
  for (int workers : {0, 2}) {
    DataLoader loader(std::make_shared<Jittery>(20, 13),
                      DataLoaderOptions().with_batch_size(4).with_num_workers(workers));
    int batches = 0;
    expect_error(
        [&] {
          for (auto& b : loader) {
            (void)b;
            ++batches;
          }
        },
        {"sample index 13", "batch 3", "corrupt record 13"});
    EXPECT_EQ(batches, 3) << "batches before the failing one arrive, in order";
    // The loader is usable again afterwards.
    int again = 0;
    try {
      for (auto& b : loader) { (void)b; ++again; }
    } catch (const Error&) {
    }
    EXPECT_EQ(again, 3);
  }
}

TEST(DataLoader, StopsEarlyWithoutHanging) {
  DataLoader loader(std::make_shared<Jittery>(400),
                    DataLoaderOptions().with_batch_size(2).with_num_workers(4));
  for (int epoch = 0; epoch < 3; ++epoch) {
    int n = 0;
    for (auto& b : loader) {
      (void)b;
      if (++n == 2) break;  // the next begin() (or the destructor) joins the workers
    }
  }
}

TEST(DataLoader, PrefetchIsBounded) {
  // Samples count how far the workers ran ahead of the consumer.
  struct Counting : Dataset {
    int64_t size() const override { return 64; }
    Sample get(int64_t i) const override {
      loaded.fetch_add(1);
      return Sample(scalar_tensor(i, kInt64));
    }
    mutable std::atomic<int64_t> loaded{0};
  };
  auto ds = std::make_shared<Counting>();
  DataLoader loader(ds, DataLoaderOptions().with_batch_size(1).with_num_workers(2).with_prefetch_factor(3));
  auto it = loader.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Consumer holds batch 0 (yielded); at most 2 * 3 more may be loaded ahead.
  EXPECT_LE(ds->loaded.load(), 1 + 6);
  EXPECT_GE(ds->loaded.load(), 1);
}

TEST(DataLoader, DefaultCollateRecursesIntoTuplesAndMaps) {
  std::vector<Sample> samples;
  for (int i = 0; i < 3; ++i)
    samples.push_back(Sample::map(
        {{"image", Sample(full({2}, static_cast<double>(i)))},
         {"pair", Sample(scalar_tensor(i, kInt64), scalar_tensor(10.0 * i, kFloat64))}}));
  Sample b = default_collate(samples);
  ASSERT_TRUE(b.is_map());
  expect_values(b.at("image").tensor(), {3, 2}, {0, 0, 1, 1, 2, 2});
  expect_values(b.at("pair")[0].tensor(), {3}, {0, 1, 2});
  EXPECT_EQ(b.at("pair")[1].tensor().dtype(), kFloat64);
  expect_values(b.at("pair")[1].tensor(), {3}, {0, 10, 20});
  // A non-contiguous sample goes through stack.
  Tensor t = arange(6).reshape({2, 3}).t();
  expect_values(default_collate({Sample(t), Sample(t)}).tensor(), {2, 3, 2},
                {0, 3, 1, 4, 2, 5, 0, 3, 1, 4, 2, 5});
  expect_error([] { default_collate({Sample(zeros({2})), Sample(zeros({3}))}); },
               {"sample 1", "Tensor[3]", "Tensor[2]", "pad_collate"});
  expect_error([] { default_collate({Sample(zeros({2})), Sample(zeros({2}), zeros({2}))}); },
               {"same structure"});
}

TEST(DataLoader, PadCollateForVariableLength) {
  std::vector<Sample> samples = {
      Sample(tensor<int64_t>({5, 6, 7}), scalar_tensor(1, kInt64)),
      Sample(tensor<int64_t>({8}), scalar_tensor(0, kInt64)),
      Sample(tensor<int64_t>({2, 3}), scalar_tensor(2, kInt64))};
  Sample b = pad_collate(0)(samples);
  expect_values(b[0].tensor(), {3, 3}, {5, 6, 7, 8, 0, 0, 2, 3, 0});
  expect_values(b[1].tensor(), {3}, {3, 1, 2});
  expect_values(b[2].tensor(), {3}, {1, 0, 2});
  // torch.nn.utils.rnn.pad_sequence(batch_first=False) layout: [L_max, B].
  Tensor tm = pad_sequence({tensor<float>({1, 2}), tensor<float>({3})}, false, -1);
  expect_values(tm, {2, 2}, {1, 3, 2, -1});
}

TEST(DataLoader, OptionErrors) {
  auto ds = std::make_shared<Jittery>(4);
  expect_error([&] {
    DataLoader(ds, DataLoaderOptions().with_shuffle(true).with_sampler(std::make_shared<SequentialSampler>(4)));
  }, {"mutually exclusive with shuffle"});
  expect_error([&] { DataLoader(ds, DataLoaderOptions().with_batch_size(0)); },
               {"batch_size should be a positive integer"});
  expect_error([&] { DataLoader(ds, DataLoaderOptions().with_num_workers(-1)); },
               {"num_workers option should be non-negative"});
  // pin_memory is accepted (no-op on CPU).
  DataLoader pinned(ds, DataLoaderOptions().with_pin_memory(true).with_batch_size(2));
  EXPECT_EQ(pinned.size(), 2);
}

TEST(DataLoader, DistributedSamplerInLoader) {
  auto ds = std::make_shared<Jittery>(16);
  std::vector<int64_t> seen;
  for (int64_t rank = 0; rank < 2; ++rank) {
    auto sampler = std::make_shared<DistributedSampler>(16, 2, rank, true, 3);
    DataLoader loader(ds, DataLoaderOptions().with_batch_size(3).with_sampler(sampler).with_num_workers(2));
    loader.set_epoch(5);
    for (auto& b : loader)
      for (double x : b[0].tensor().select(1, 0).select(1, 0).select(1, 0).to_vector<double>())
        seen.push_back(static_cast<int64_t>(x));
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> expected(16);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(seen, expected);
}

TEST(DataLoader, ManualSeedFixesTheDefaultShuffle) {
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{arange(50)});
  auto order = [&](uint64_t seed) {
    manual_seed(seed);
    DataLoader loader(ds, DataLoaderOptions().with_batch_size(50).with_shuffle(true));
    return (*loader.begin())[0].tensor().to_vector<int64_t>();
  };
  EXPECT_EQ(order(3), order(3));
  EXPECT_NE(order(3), order(4));
  manual_seed(67280421310721ULL);  // restore the default seed for other tests
}

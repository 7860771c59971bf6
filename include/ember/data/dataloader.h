// DataLoader: batches a Dataset in a sampler's order, loading with worker
// threads through a bounded prefetch queue. See Note [deterministic loading].
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "ember/data/collate.h"
#include "ember/data/dataset.h"
#include "ember/data/sampler.h"

namespace ember::data {

// Note [deterministic loading]
// An epoch's batches are fixed before any worker starts: the sampler's
// indices (a function of seed and epoch) are cut into batches, batch k is
// collated from exactly those samples, and batches are handed out in k order
// whatever worker finished first. Random transforms draw from (seed, epoch,
// index) (Note [per-sample randomness]). So the batches, their order and
// their content are the same for any num_workers and any thread timing.

struct DataLoaderOptions {
  int64_t batch_size = 1;
  // A RandomSampler seeded with `seed`; exclusive with `sampler`.
  bool shuffle = false;
  SamplerPtr sampler;
  bool drop_last = false;
  // Default: default_collate.
  CollateFn collate_fn;
  // 0 loads in the calling thread; N > 0 starts N std::threads per epoch.
  int num_workers = 0;
  // Batches each worker may have loaded ahead (queue bound: N * factor).
  int prefetch_factor = 2;
  // Accepted for PyTorch parity; a no-op on CPU, honoured by the CUDA backend.
  bool pin_memory = false;
  // Seed of the shuffle; unset takes the default generator's seed at
  // construction, so ember::manual_seed(s) fixes the order as in PyTorch.
  std::optional<uint64_t> seed;

  DataLoaderOptions& with_batch_size(int64_t v) { batch_size = v; return *this; }
  DataLoaderOptions& with_shuffle(bool v) { shuffle = v; return *this; }
  DataLoaderOptions& with_sampler(SamplerPtr v) { sampler = std::move(v); return *this; }
  DataLoaderOptions& with_drop_last(bool v) { drop_last = v; return *this; }
  DataLoaderOptions& with_collate_fn(CollateFn v) { collate_fn = std::move(v); return *this; }
  DataLoaderOptions& with_num_workers(int v) { num_workers = v; return *this; }
  DataLoaderOptions& with_prefetch_factor(int v) { prefetch_factor = v; return *this; }
  DataLoaderOptions& with_pin_memory(bool v) { pin_memory = v; return *this; }
  DataLoaderOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

class DataLoader {
  class Run;

 public:
  DataLoader(DatasetPtr dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Batches per epoch (len(loader)).
  int64_t size() const { return batch_sampler_.size(); }
  const DatasetPtr& dataset() const { return dataset_; }
  const DataLoaderOptions& options() const { return options_; }

  // The next epoch to iterate (sampler order and transform randomness). Each
  // begin() uses it and then advances it by one, so a plain loop reshuffles
  // every epoch; call set_epoch(e) to resume at epoch e.
  void set_epoch(int64_t epoch) { next_epoch_ = epoch; }
  int64_t epoch() const { return next_epoch_; }

  // An input iterator over one epoch's batches. Starting a new epoch (begin)
  // stops and joins the workers of the previous one. An exception inside a
  // worker is rethrown by operator++ / begin as an ember::Error naming the
  // sample index.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Sample;
    using difference_type = std::ptrdiff_t;
    using pointer = Sample*;
    using reference = Sample&;

    iterator() = default;
    Sample& operator*() const { return *current_; }
    Sample* operator->() const { return current_.get(); }
    iterator& operator++();
    bool operator==(const iterator& o) const { return current_ == o.current_; }
    bool operator!=(const iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    explicit iterator(Run* run);
    Run* run_ = nullptr;
    std::shared_ptr<Sample> current_;
  };

  iterator begin();
  iterator end() { return iterator(); }

 private:
  DatasetPtr dataset_;
  DataLoaderOptions options_;
  BatchSampler batch_sampler_;
  int64_t next_epoch_ = 0;
  std::unique_ptr<Run> run_;
};

}  // namespace ember::data

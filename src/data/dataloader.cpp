// DataLoader: one Run per epoch — fixed batch list, worker threads claiming
// batches in order within a bounded window, results handed out in order.
#include "ember/data/dataloader.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "ember/core/generator.h"

namespace ember::data {

namespace {
SamplerPtr make_sampler(const DatasetPtr& dataset, const DataLoaderOptions& o) {
  EMBER_CHECK(dataset, "DataLoader: the dataset is null");
  EMBER_CHECK(!(o.shuffle && o.sampler),
              "DataLoader: sampler option is mutually exclusive with shuffle; shuffle inside "
              "the sampler (e.g. RandomSampler) instead");
  if (o.sampler) return o.sampler;
  if (o.shuffle)
    return std::make_shared<RandomSampler>(dataset->size(), false, -1,
                                           o.seed.value_or(default_generator().initial_seed()));
  return std::make_shared<SequentialSampler>(dataset->size());
}
}  // namespace

// One epoch of loading. See Note [deterministic loading] in dataloader.h.
class DataLoader::Run {
 public:
  Run(DatasetPtr dataset, CollateFn collate, std::vector<std::vector<int64_t>> batches,
      int num_workers, int prefetch_factor)
      : dataset_(std::move(dataset)), collate_(std::move(collate)), batches_(std::move(batches)),
        results_(batches_.size()), errors_(batches_.size()),
        capacity_(static_cast<int64_t>(num_workers) * prefetch_factor) {
    for (int w = 0; w < num_workers; ++w) threads_.emplace_back([this, w] { work(w); });
  }

  ~Run() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // The next batch, or null after the last; rethrows a worker's error.
  std::shared_ptr<Sample> next() {
    const auto n = static_cast<int64_t>(batches_.size());
    if (next_yield_ >= n) return nullptr;
    const int64_t k = next_yield_++;
    const auto slot = static_cast<size_t>(k);
    if (threads_.empty()) return std::make_shared<Sample>(load(k, -1));
    std::unique_lock<std::mutex> lock(mu_);
    cv_ready_.wait(lock, [&] { return results_[slot] || errors_[slot]; });
    std::shared_ptr<Sample> out = std::move(results_[slot]);
    std::exception_ptr err = errors_[slot];
    yielded_ = k + 1;
    lock.unlock();
    cv_work_.notify_all();  // the window moved: a worker may claim one more batch
    if (err) {
      next_yield_ = n;  // the epoch ends at the failing batch
      std::rethrow_exception(err);
    }
    return out;
  }

 private:
  void work(int worker) {
    const auto n = static_cast<int64_t>(batches_.size());
    for (;;) {
      int64_t k;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_work_.wait(lock, [&] { return stop_ || next_claim_ >= n || next_claim_ < yielded_ + capacity_; });
        if (stop_ || next_claim_ >= n) return;
        k = next_claim_++;
      }
      std::shared_ptr<Sample> result;
      std::exception_ptr error;
      try {
        result = std::make_shared<Sample>(load(k, worker));
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        results_[static_cast<size_t>(k)] = std::move(result);
        errors_[static_cast<size_t>(k)] = error;
      }
      cv_ready_.notify_all();
    }
  }

  Sample load(int64_t k, int worker) const {
    const auto& indices = batches_[static_cast<size_t>(k)];
    std::string where = worker < 0 ? "" : fmt::format(" in worker {}", worker);
    std::vector<Sample> samples;
    samples.reserve(indices.size());
    for (int64_t index : indices) {
      try {
        samples.push_back(dataset_->get(index));
      } catch (const std::exception& e) {
        EMBER_ERROR("DataLoader: loading sample index {} (batch {}){} failed: {}", index, k,
                    where, e.what());
      } catch (...) {
        EMBER_ERROR("DataLoader: loading sample index {} (batch {}){} failed with a non-standard "
                    "exception", index, k, where);
      }
    }
    try {
      return collate_(std::move(samples));
    } catch (const std::exception& e) {
      EMBER_ERROR("DataLoader: collating batch {} (sample indices [{}]){} failed: {}", k,
                  fmt::join(indices, ", "), where, e.what());
    }
  }

  DatasetPtr dataset_;
  CollateFn collate_;
  std::vector<std::vector<int64_t>> batches_;
  std::vector<std::shared_ptr<Sample>> results_;
  std::vector<std::exception_ptr> errors_;
  const int64_t capacity_;  // batches loaded ahead of the consumer
  std::mutex mu_;
  std::condition_variable cv_work_, cv_ready_;
  int64_t next_claim_ = 0;  // next batch a worker takes (guarded by mu_)
  int64_t yielded_ = 0;     // batches handed to the consumer (guarded by mu_)
  int64_t next_yield_ = 0;  // consumer thread only
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

DataLoader::DataLoader(DatasetPtr dataset, DataLoaderOptions options)
    : dataset_(dataset), options_(std::move(options)),
      batch_sampler_(make_sampler(dataset, options_), options_.batch_size, options_.drop_last) {
  EMBER_CHECK(options_.num_workers >= 0,
              "DataLoader: num_workers option should be non-negative, got {}; use 0 to load in "
              "the calling thread", options_.num_workers);
  EMBER_CHECK(options_.prefetch_factor >= 1,
              "DataLoader: prefetch_factor must be at least 1, got {}", options_.prefetch_factor);
  if (!options_.collate_fn) options_.collate_fn = default_collate;
}

DataLoader::~DataLoader() = default;

DataLoader::iterator DataLoader::begin() {
  run_.reset();  // joins the previous epoch's workers before touching epochs
  const int64_t epoch = next_epoch_++;
  batch_sampler_.set_epoch(epoch);
  dataset_->set_epoch(epoch);
  run_ = std::make_unique<Run>(dataset_, options_.collate_fn, batch_sampler_.batches(),
                               options_.num_workers, options_.prefetch_factor);
  return iterator(run_.get());
}

DataLoader::iterator::iterator(Run* run) : run_(run), current_(run->next()) {}

DataLoader::iterator& DataLoader::iterator::operator++() {
  current_ = run_->next();
  return *this;
}

}  // namespace ember::data

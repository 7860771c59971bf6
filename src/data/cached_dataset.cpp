// CachedDataset: first get of an index computes and stores it; later gets share it.
#include "ember/data/cached_dataset.h"

namespace ember::data {

CachedDataset::CachedDataset(DatasetPtr dataset) : dataset_(std::move(dataset)) {
  EMBER_CHECK(dataset_, "CachedDataset: the dataset is null");
  cache_.resize(static_cast<size_t>(dataset_->size()));
  filled_.assign(cache_.size(), 0);
}

Sample CachedDataset::get(int64_t index) const {
  EMBER_CHECK_INDEX(index >= 0 && index < size(),
                    "CachedDataset: index {} is out of range for a dataset of size {}", index,
                    size());
  auto i = static_cast<size_t>(index);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (filled_[i]) return cache_[i];
  }
  // Loaded outside the lock so workers decode in parallel; two workers racing
  // for the same index both compute it, and the first store wins.
  Sample s = dataset_->get(index);
  std::lock_guard<std::mutex> lock(mu_);
  if (!filled_[i]) {
    cache_[i] = s;
    filled_[i] = 1;
    ++cached_;
  }
  return cache_[i];
}

int64_t CachedDataset::cached_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

}  // namespace ember::data

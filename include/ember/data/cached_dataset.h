// CachedDataset: keeps every sample of the dataset it wraps in memory after
// its first get, so decoding and deterministic preprocessing run once.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

// Put it below random transforms (cache the decoded images, augment on top):
// a cached sample never changes, whatever the epoch. Cached tensors are
// shared with every caller, so transforms must not modify their input in
// place (Ember's never do).
class CachedDataset : public Dataset {
 public:
  explicit CachedDataset(DatasetPtr dataset);
  int64_t size() const override { return static_cast<int64_t>(cache_.size()); }
  Sample get(int64_t index) const override;
  // Not forwarded: the cache would be stale if the inner samples depended on it.
  void set_epoch(int64_t) override {}
  int64_t cached_count() const;

 private:
  DatasetPtr dataset_;
  mutable std::mutex mu_;
  mutable std::vector<Sample> cache_;
  mutable std::vector<uint8_t> filled_;
  mutable int64_t cached_ = 0;
};

}  // namespace ember::data

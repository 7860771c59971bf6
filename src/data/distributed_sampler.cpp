// DistributedSampler: PyTorch's padding/dropping rule and rank striding.
#include "ember/data/distributed_sampler.h"

#include <numeric>

#include "ember/core/error.h"

namespace ember::data {

DistributedSampler::DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : n_(dataset_size), num_replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed),
      drop_last_(drop_last) {
  EMBER_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be positive, got {}",
              num_replicas);
  EMBER_CHECK(rank >= 0 && rank < num_replicas,
              "DistributedSampler: invalid rank {}, rank should be in the interval [0, {}]", rank,
              num_replicas - 1);
  EMBER_CHECK(dataset_size >= 0, "DistributedSampler: dataset size must be non-negative, got {}",
              dataset_size);
  if (drop_last && n_ % num_replicas != 0)
    num_samples_ = (n_ - num_replicas + num_replicas - 1) / num_replicas;  // ceil((n - R) / R)
  else
    num_samples_ = (n_ + num_replicas - 1) / num_replicas;
  if (num_samples_ < 0) num_samples_ = 0;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> all;
  if (shuffle_) {
    all = seeded_randperm(n_, seed_, epoch_);
  } else {
    all.resize(static_cast<size_t>(n_));
    std::iota(all.begin(), all.end(), int64_t{0});
  }
  const auto total = static_cast<size_t>(total_size());
  if (!drop_last_) {
    // Pad with the start of the order (repeated if padding exceeds n).
    size_t n = all.size();
    for (size_t i = 0; all.size() < total && n > 0; ++i) all.push_back(all[i % n]);
  } else {
    all.resize(total);
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(num_samples_));
  for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(num_replicas_))
    out.push_back(all[i]);
  return out;
}

}  // namespace ember::data

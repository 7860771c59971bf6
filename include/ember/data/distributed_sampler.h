// DistributedSampler: the share of each epoch's indices one rank of a
// data-parallel job visits (torch.utils.data.distributed.DistributedSampler).
#pragma once

#include "ember/data/sampler.h"

namespace ember::data {

// Every rank computes the same (seed, epoch) order — so all ranks must use
// the same seed and call set_epoch each epoch — pads it by repeating its
// start to a multiple of num_replicas (or drops the tail with drop_last), and
// takes every num_replicas-th index from position rank. Without padding or
// dropping (n divisible by num_replicas) the ranks partition the data set.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  // Indices for this rank per epoch (num_samples in PyTorch).
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices() const override;
  int64_t total_size() const { return num_samples_ * num_replicas_; }

 private:
  int64_t n_, num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t num_samples_;
};

}  // namespace ember::data

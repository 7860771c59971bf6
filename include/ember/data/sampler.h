// Samplers (torch.utils.data.sampler): the order in which a DataLoader visits
// dataset indices. Random orders come from Philox keyed by (seed, epoch), so
// an epoch's order is a pure function of both and set_epoch reshuffles.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace ember::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Number of indices one epoch yields (len(sampler)).
  virtual int64_t size() const = 0;
  // This epoch's indices, in order.
  virtual std::vector<int64_t> indices() const = 0;
  virtual void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

 protected:
  int64_t epoch_ = 0;
};

using SamplerPtr = std::shared_ptr<Sampler>;

// 0, 1, ..., n - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices() const override;

 private:
  int64_t n_;
};

// A permutation of [0, n) (or num_samples draws with replacement, or
// num_samples > n without replacement as several permutations back to back,
// like PyTorch).
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t n, bool replacement = false, int64_t num_samples = -1,
                         uint64_t seed = 0);
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices() const override;

 private:
  int64_t n_, num_samples_;
  bool replacement_;
  uint64_t seed_;
};

// A permutation of the given indices.
class SubsetRandomSampler : public Sampler {
 public:
  explicit SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed = 0);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  std::vector<int64_t> indices() const override;

 private:
  std::vector<int64_t> indices_;
  uint64_t seed_;
};

// num_samples indices drawn with probability proportional to weights (for
// class imbalance: weight each sample by 1 / its class frequency). Without
// replacement each index appears at most once.
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true,
                        uint64_t seed = 0);
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices() const override;

 private:
  std::vector<double> weights_;
  std::vector<double> cumulative_;
  int64_t num_samples_;
  bool replacement_;
  uint64_t seed_;
};

// Groups another sampler's indices into batches.
class BatchSampler {
 public:
  BatchSampler(SamplerPtr sampler, int64_t batch_size, bool drop_last);
  // Number of batches per epoch.
  int64_t size() const;
  std::vector<std::vector<int64_t>> batches() const;
  void set_epoch(int64_t epoch) { sampler_->set_epoch(epoch); }
  const SamplerPtr& sampler() const { return sampler_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  SamplerPtr sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

// A permutation of [0, n) from Philox keyed by (seed, epoch): Fisher-Yates
// with one 64-bit draw per step.
std::vector<int64_t> seeded_randperm(int64_t n, uint64_t seed, int64_t epoch);

}  // namespace ember::data

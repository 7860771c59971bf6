// Sequential, Random, SubsetRandom, WeightedRandom and Batch samplers.
#include "ember/data/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/core/error.h"
#include "ember/data/sample_generator.h"

namespace ember::data {

namespace {
// Sampler streams use a salted seed so they never coincide with the
// per-sample transform streams of the same seed.
constexpr uint64_t kSamplerSalt = 0x53414D504C4552ULL;  // "SAMPLER"

SampleGenerator sampler_generator(uint64_t seed, int64_t epoch) {
  return SampleGenerator(seed ^ kSamplerSalt, epoch, 0);
}

void shuffle(std::vector<int64_t>& v, SampleGenerator& gen) {
  for (size_t i = v.size(); i > 1; --i) {
    auto j = static_cast<size_t>(gen.randint(0, static_cast<int64_t>(i)));
    std::swap(v[i - 1], v[j]);
  }
}
}  // namespace

std::vector<int64_t> seeded_randperm(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  SampleGenerator gen = sampler_generator(seed, epoch);
  shuffle(perm, gen);
  return perm;
}

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  EMBER_CHECK(n >= 0, "SequentialSampler: expected a non-negative size, got {}", n);
}

std::vector<int64_t> SequentialSampler::indices() const {
  std::vector<int64_t> v(static_cast<size_t>(n_));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

RandomSampler::RandomSampler(int64_t n, bool replacement, int64_t num_samples, uint64_t seed)
    : n_(n), num_samples_(num_samples < 0 ? n : num_samples), replacement_(replacement),
      seed_(seed) {
  EMBER_CHECK(n >= 0, "RandomSampler: expected a non-negative dataset size, got {}", n);
  EMBER_CHECK(n > 0 || num_samples_ == 0,
              "RandomSampler: cannot draw {} samples from an empty dataset", num_samples_);
}

std::vector<int64_t> RandomSampler::indices() const {
  SampleGenerator gen = sampler_generator(seed_, epoch_);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(num_samples_));
  if (replacement_) {
    for (int64_t i = 0; i < num_samples_; ++i) out.push_back(gen.randint(0, n_));
    return out;
  }
  // Whole permutations back to back, then part of one more (PyTorch's rule).
  std::vector<int64_t> perm(static_cast<size_t>(n_));
  while (static_cast<int64_t>(out.size()) < num_samples_) {
    std::iota(perm.begin(), perm.end(), int64_t{0});
    shuffle(perm, gen);
    auto take = std::min<int64_t>(n_, num_samples_ - static_cast<int64_t>(out.size()));
    out.insert(out.end(), perm.begin(), perm.begin() + take);
  }
  return out;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed)
    : indices_(std::move(indices)), seed_(seed) {}

std::vector<int64_t> SubsetRandomSampler::indices() const {
  std::vector<int64_t> out = indices_;
  SampleGenerator gen = sampler_generator(seed_, epoch_);
  shuffle(out, gen);
  return out;
}

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, int64_t num_samples,
                                             bool replacement, uint64_t seed)
    : weights_(std::move(weights)), num_samples_(num_samples), replacement_(replacement),
      seed_(seed) {
  EMBER_CHECK(num_samples >= 0, "WeightedRandomSampler: num_samples must be non-negative, got {}",
              num_samples);
  double total = 0;
  int64_t positive = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    EMBER_CHECK(std::isfinite(weights_[i]) && weights_[i] >= 0,
                "WeightedRandomSampler: weights must be finite and non-negative, weights[{}] = {}",
                i, weights_[i]);
    total += weights_[i];
    positive += weights_[i] > 0;
    cumulative_.push_back(total);
  }
  EMBER_CHECK(total > 0 || num_samples == 0,
              "WeightedRandomSampler: the weights sum to 0; at least one must be positive");
  EMBER_CHECK(replacement || num_samples <= positive,
              "WeightedRandomSampler: cannot draw {} samples without replacement when only {} "
              "weights are positive; lower num_samples or set replacement = true",
              num_samples, positive);
}

std::vector<int64_t> WeightedRandomSampler::indices() const {
  SampleGenerator gen = sampler_generator(seed_, epoch_);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(num_samples_));
  if (replacement_) {
    const double total = cumulative_.back();
    for (int64_t i = 0; i < num_samples_; ++i) {
      double u = gen.uniform() * total;
      auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
      auto idx = static_cast<int64_t>(it - cumulative_.begin());
      // Rounding can land u on the total; and zero-weight entries have empty
      // intervals, which upper_bound already skips.
      out.push_back(std::min<int64_t>(idx, static_cast<int64_t>(weights_.size()) - 1));
    }
    return out;
  }
  // Efraimidis-Spirakis: the num_samples largest log(u) / w form a weighted
  // sample without replacement, in draw order when sorted descending.
  std::vector<std::pair<double, int64_t>> keys;
  for (size_t i = 0; i < weights_.size(); ++i) {
    double u = gen.uniform();
    if (weights_[i] > 0)
      keys.emplace_back(std::log(std::max(u, 1e-300)) / weights_[i], static_cast<int64_t>(i));
  }
  std::partial_sort(keys.begin(), keys.begin() + num_samples_, keys.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  for (int64_t i = 0; i < num_samples_; ++i) out.push_back(keys[static_cast<size_t>(i)].second);
  return out;
}

BatchSampler::BatchSampler(SamplerPtr sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  EMBER_CHECK(sampler_, "BatchSampler: the sampler is null");
  EMBER_CHECK(batch_size > 0, "BatchSampler: batch_size should be a positive integer, got {}",
              batch_size);
}

int64_t BatchSampler::size() const {
  int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<int64_t>> BatchSampler::batches() const {
  std::vector<int64_t> idx = sampler_->indices();
  std::vector<std::vector<int64_t>> out;
  out.reserve(static_cast<size_t>(size()));
  for (size_t start = 0; start < idx.size(); start += static_cast<size_t>(batch_size_)) {
    size_t end = std::min(idx.size(), start + static_cast<size_t>(batch_size_));
    if (drop_last_ && end - start < static_cast<size_t>(batch_size_)) break;
    out.emplace_back(idx.begin() + static_cast<std::ptrdiff_t>(start),
                     idx.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

}  // namespace ember::data

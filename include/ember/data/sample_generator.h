// SampleGenerator: the random stream of one sample in one epoch, derived
// from (seed, epoch, index) with Philox.
#pragma once

#include <array>
#include <cstdint>

#include "ember/core/generator.h"

namespace ember::data {

// Note [per-sample randomness]
// Augmentation must not depend on which worker thread loads a sample or in
// what order, so no transform draws from a shared stateful generator. Each
// sample's draws come from Philox keyed by (seed, epoch) at counters
// (index, 0), (index, 1), ...: sample i of epoch e gets the same numbers with
// 0, 1 or 16 workers, and a resumed run (set_epoch) repeats them exactly.
class SampleGenerator {
 public:
  SampleGenerator(uint64_t seed, int64_t epoch, int64_t index);

  uint32_t next_u32();
  // Uniform in [0, 1) (53 bits).
  double uniform();
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // Uniform integer in [low, high); low when the range is empty.
  int64_t randint(int64_t low, int64_t high);
  // True with probability p.
  bool bernoulli(double p) { return uniform() < p; }

 private:
  uint64_t key_;
  uint64_t counter_;
  std::array<uint32_t, 4> block_{};
  int used_ = 4;
};

// A Philox key from a seed and an epoch (both mixed, so nearby seeds and
// epochs give unrelated streams).
uint64_t philox_key(uint64_t seed, int64_t epoch);

}  // namespace ember::data

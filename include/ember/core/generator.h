// Seedable counter-based random numbers (Philox4x32-10). Element i of a
// random op depends only on (seed, offset, i), so results do not depend on
// the number of threads, and the state (seed, offset) goes into checkpoints.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

namespace ember {

class Tensor;

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}

  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }
  // 16 bytes (seed, offset) as a uint8 tensor, like torch.Generator.get_state.
  Tensor get_state() const;
  void set_state(const Tensor& state);

  // Reserves n counters (each gives 4 uint32) and returns the first; random
  // ops call this once and then draw in parallel from philox(seed, base + i).
  uint64_t reserve(uint64_t n);
  uint64_t seed() const { return seed_; }
  std::mutex& mutex() { return mu_; }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
  std::mutex mu_;
};

// The process-wide generator used when an op is given none.
Generator& default_generator();
// Seeds the default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

// One Philox4x32-10 block: 4 uniform uint32 from (key, counter).
std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter);

inline float uint32_to_uniform_float(uint32_t x) {
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);  // [0, 1)
}
inline double uint64_to_uniform_double(uint64_t x) {
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
}

}  // namespace ember

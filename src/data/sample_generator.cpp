// SampleGenerator: Philox draws keyed by (seed, epoch), counted by sample index.
#include "ember/data/sample_generator.h"

namespace ember::data {

namespace {
// splitmix64's finalizer: spreads nearby inputs over all 64 bits.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
// Each sample owns 2^20 Philox blocks (4M draws): far more than any
// transform chain uses, and 2^44 samples before two indices could overlap.
constexpr int kBlocksPerSampleBits = 20;
}  // namespace

uint64_t philox_key(uint64_t seed, int64_t epoch) {
  return mix64(mix64(seed) ^ static_cast<uint64_t>(epoch));
}

SampleGenerator::SampleGenerator(uint64_t seed, int64_t epoch, int64_t index)
    : key_(philox_key(seed, epoch)),
      counter_(static_cast<uint64_t>(index) << kBlocksPerSampleBits) {}

uint32_t SampleGenerator::next_u32() {
  if (used_ == 4) {
    block_ = philox4x32(key_, counter_++);
    used_ = 0;
  }
  return block_[static_cast<size_t>(used_++)];
}

double SampleGenerator::uniform() {
  uint64_t hi = next_u32();
  uint64_t lo = next_u32();
  return uint64_to_uniform_double((hi << 32) | lo);
}

int64_t SampleGenerator::randint(int64_t low, int64_t high) {
  if (high <= low) return low;
  uint64_t range = static_cast<uint64_t>(high - low);
  uint64_t hi = next_u32();
  uint64_t draw = (hi << 32) | next_u32();
  // 64-bit draw modulo a small range: bias below 2^-40 for ranges under 2^24.
  return low + static_cast<int64_t>(draw % range);
}

}  // namespace ember::data

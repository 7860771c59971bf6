// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
#include "ember/core/generator.h"

#include <cstring>

#include "ember/core/error.h"
#include "ember/core/tensor.h"

namespace ember {

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  return {c0, c1, c2, c3};
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t base = offset_;
  offset_ += n;
  return base;
}

Tensor Generator::get_state() const {
  auto storage = make_intrusive<StorageImpl>(16, kCPU);
  std::memcpy(storage->data(), &seed_, 8);
  std::memcpy(static_cast<char*>(storage->data()) + 8, &offset_, 8);
  return Tensor(make_intrusive<TensorImpl>(storage, kUInt8, DimVector{16}, DimVector{1}, 0));
}

void Generator::set_state(const Tensor& state) {
  EMBER_CHECK(state.dtype() == kUInt8 && state.numel() == 16 && state.is_contiguous(),
              "Generator.set_state: expected a contiguous uint8 tensor of 16 bytes from "
              "get_state(), got dtype {} with {} elements",
              to_string(state.dtype()), state.numel());
  std::lock_guard<std::mutex> lock(mu_);
  std::memcpy(&seed_, state.data_ptr(), 8);
  std::memcpy(&offset_, static_cast<const char*>(state.data_ptr()) + 8, 8);
}

Generator& default_generator() {
  static Generator gen;  // guarded explicit global, like torch's default generator
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ember

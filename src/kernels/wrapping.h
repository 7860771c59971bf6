// Note [integer wrap]: PyTorch's integer arithmetic wraps modulo 2^bits
// (torch.tensor([16]) * 4683743612465315839 == 1152921504606846960, -INT64_MIN
// == INT64_MIN); C++ leaves signed overflow undefined, and an ONNX or
// checkpoint file can hold any integers. So the kernels add, subtract,
// multiply and negate integers through uint64_t, whose arithmetic is modular,
// and narrow back (modular too since C++20). Floats and bool pass through.
#pragma once

#include <cstdint>
#include <type_traits>

namespace ember {

template <typename T>
inline constexpr bool kWrapsAsUnsigned = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
constexpr T wrapping_add(T a, T b) {
  if constexpr (kWrapsAsUnsigned<T>) return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return static_cast<T>(a + b);
}
template <typename T>
constexpr T wrapping_sub(T a, T b) {
  if constexpr (kWrapsAsUnsigned<T>) return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else return static_cast<T>(a - b);
}
template <typename T>
constexpr T wrapping_mul(T a, T b) {
  if constexpr (kWrapsAsUnsigned<T>) return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return static_cast<T>(a * b);
}
template <typename T>
constexpr T wrapping_neg(T a) {
  if constexpr (kWrapsAsUnsigned<T>) return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
  else return static_cast<T>(-a);
}

}  // namespace ember

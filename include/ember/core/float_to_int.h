// Float-to-integer conversion with a defined result for every input.
//
// C++ leaves the conversion of NaN, infinities and out-of-range values
// undefined, and an untrusted file can hold any of them. These return what
// PyTorch returns on x86 (its conversion is the cvtt instruction): NaN and
// values outside [-2^63, 2^63) give INT64_MIN for int64; for narrower types
// the value goes through a 32-bit conversion (outside [-2^31, 2^31): INT32_MIN)
// and is then narrowed modulo 2^bits, so torch.tensor([300.]).to(torch.int8)
// is 44 and 3e9 is 0.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace ember {

constexpr int64_t float_to_int64(double v) {
  // 2^63 is exact in double; NaN fails both comparisons.
  if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return static_cast<int64_t>(v);
  return std::numeric_limits<int64_t>::min();
}

constexpr int32_t float_to_int32(double v) {
  if (v > -2147483649.0 && v < 2147483648.0) return static_cast<int32_t>(v);
  return std::numeric_limits<int32_t>::min();
}

template <typename To>
constexpr To float_to_integral(double v) {
  static_assert(std::is_integral_v<To> && !std::is_same_v<To, bool>);
  if constexpr (sizeof(To) == 8) return static_cast<To>(float_to_int64(v));
  else return static_cast<To>(float_to_int32(v));  // modular narrowing (C++20)
}

}  // namespace ember

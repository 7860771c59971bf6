// copy (with dtype conversion) and fill kernels.
#include <bit>
#include <cstdint>
#include <cstring>

#include "ember/core/float_to_int.h"
#include "kernels/cpu/loops.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_types.h"

namespace ember {
namespace {

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<opmath_t<From>>(v) != static_cast<opmath_t<From>>(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    return float_to_integral<To>(static_cast<double>(static_cast<opmath_t<From>>(v)));
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

// float32 -> bfloat16, contiguous: BFloat16::from_float without branches, so
// the loop vectorizes (the generic per-element path ran ~25x slower than a
// copy, and native bf16 autocast converts every matmul operand this way).
void float_to_bf16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = std::bit_cast<uint32_t>(in[i]);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t quiet_nan = (x >> 16) | 0x40u;
    out[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

void copy_kernel(const TensorIter& iter, const ElementwiseParams&) {
  ScalarType to = iter.dtype(0), from = iter.dtype(1);
  if (to == from && iter.is_contiguous()) {
    size_t es = element_size(to);
    iter.for_each([&](char** data, const int64_t*, int64_t n) {
      std::memcpy(data[0], data[1], static_cast<size_t>(n) * es);
    });
    return;
  }
  if (to == kBFloat16 && from == kFloat32 && iter.is_contiguous()) {
    iter.for_each([&](char** data, const int64_t*, int64_t n) {
      float_to_bf16(reinterpret_cast<const float*>(data[1]), reinterpret_cast<uint16_t*>(data[0]), n);
    });
    return;
  }
  dispatch_all(to, "copy", [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    dispatch_all(from, "copy", [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      cpu_kernel(iter, [](From v) -> To { return convert<To, From>(v); });
    });
  });
}

void fill_kernel(const TensorIter& iter, const ElementwiseParams& p) {
  dispatch_all(iter.dtype(0), "fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = p.a->to<T>();
    iter.for_each([&](char** data, const int64_t* s, int64_t n) {
      if (s[0] == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(data[0]);
        std::fill(out, out + n, v);
      } else {
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(data[0] + k * s[0]) = v;
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(copy, CPU, copy_kernel);
EMBER_REGISTER_KERNEL(fill, CPU, fill_kernel);

}  // namespace ember

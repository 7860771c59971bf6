// dtype dispatch: calls f(TypeTag<T>{}) for the C++ type of a ScalarType.
//   dispatch_all(t, "exp", [&](auto tag) { using T = typename decltype(tag)::type; ... });
#pragma once

#include "ember/core/error.h"
#include "ember/core/scalar_type.h"

namespace ember {

template <typename T>
struct TypeTag {
  using type = T;
};

#define EMBER_TYPE_CASE(ctype, name) \
  case ScalarType::name:             \
    return f(TypeTag<ctype>{});

[[noreturn]] inline void throw_unsupported_dtype(const char* op, ScalarType t, const char* what) {
  ::ember::detail::throw_type_error(
      fmt::format("{}: dtype {} is not supported (expected {})", op, to_string(t), what));
}

template <typename F>
decltype(auto) dispatch_all(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_TYPE_CASE(bool, Bool)
    EMBER_TYPE_CASE(uint8_t, UInt8)
    EMBER_TYPE_CASE(int8_t, Int8)
    EMBER_TYPE_CASE(int16_t, Int16)
    EMBER_TYPE_CASE(int32_t, Int32)
    EMBER_TYPE_CASE(int64_t, Int64)
    EMBER_TYPE_CASE(Half, Float16)
    EMBER_TYPE_CASE(BFloat16, BFloat16)
    EMBER_TYPE_CASE(float, Float32)
    EMBER_TYPE_CASE(double, Float64)
    default:
      throw_unsupported_dtype(op, t, "a valid dtype");
  }
}

// Every dtype but bool.
template <typename F>
decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_TYPE_CASE(uint8_t, UInt8)
    EMBER_TYPE_CASE(int8_t, Int8)
    EMBER_TYPE_CASE(int16_t, Int16)
    EMBER_TYPE_CASE(int32_t, Int32)
    EMBER_TYPE_CASE(int64_t, Int64)
    EMBER_TYPE_CASE(Half, Float16)
    EMBER_TYPE_CASE(BFloat16, BFloat16)
    EMBER_TYPE_CASE(float, Float32)
    EMBER_TYPE_CASE(double, Float64)
    default:
      throw_unsupported_dtype(op, t, "a numeric dtype");
  }
}

template <typename F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_TYPE_CASE(Half, Float16)
    EMBER_TYPE_CASE(BFloat16, BFloat16)
    EMBER_TYPE_CASE(float, Float32)
    EMBER_TYPE_CASE(double, Float64)
    default:
      throw_unsupported_dtype(op, t, "a floating-point dtype");
  }
}

// Integers and bool.
template <typename F>
decltype(auto) dispatch_integral(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_TYPE_CASE(bool, Bool)
    EMBER_TYPE_CASE(uint8_t, UInt8)
    EMBER_TYPE_CASE(int8_t, Int8)
    EMBER_TYPE_CASE(int16_t, Int16)
    EMBER_TYPE_CASE(int32_t, Int32)
    EMBER_TYPE_CASE(int64_t, Int64)
    default:
      throw_unsupported_dtype(op, t, "an integer or bool dtype");
  }
}

#undef EMBER_TYPE_CASE

}  // namespace ember

// dtypes, their C++ types, and PyTorch's type-promotion rules.
#pragma once

#include <cstdint>
#include <string_view>

#include "ember/core/half.h"

namespace ember {

// Note [dtype order]: the enum order is the promotion order inside a category
// (bool < integers < floats); promote_types relies on it.
#define EMBER_FORALL_SCALAR_TYPES(_) \
  _(bool, Bool, "bool")              \
  _(uint8_t, UInt8, "uint8")         \
  _(int8_t, Int8, "int8")            \
  _(int16_t, Int16, "int16")         \
  _(int32_t, Int32, "int32")         \
  _(int64_t, Int64, "int64")         \
  _(::ember::Half, Float16, "float16") \
  _(::ember::BFloat16, BFloat16, "bfloat16") \
  _(float, Float32, "float32")       \
  _(double, Float64, "float64")

enum class ScalarType : int8_t {
#define EMBER_ENUM(ctype, name, str) name,
  EMBER_FORALL_SCALAR_TYPES(EMBER_ENUM)
#undef EMBER_ENUM
  NumTypes
};

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kUInt8 = ScalarType::UInt8;
constexpr ScalarType kInt8 = ScalarType::Int8;
constexpr ScalarType kInt16 = ScalarType::Int16;
constexpr ScalarType kShort = ScalarType::Int16;
constexpr ScalarType kInt32 = ScalarType::Int32;
constexpr ScalarType kInt64 = ScalarType::Int64;
constexpr ScalarType kFloat16 = ScalarType::Float16;
constexpr ScalarType kHalf = ScalarType::Float16;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat32 = ScalarType::Float32;
constexpr ScalarType kFloat = ScalarType::Float32;
constexpr ScalarType kFloat64 = ScalarType::Float64;
constexpr ScalarType kDouble = ScalarType::Float64;
constexpr ScalarType kLong = ScalarType::Int64;
constexpr ScalarType kInt = ScalarType::Int32;

// The default dtype of floating factories and of float scalars mixed with
// integer tensors.
constexpr ScalarType kDefaultFloat = ScalarType::Float32;

namespace detail {
// At namespace scope: a table local to element_size was rebuilt on the stack
// at every call (GCC 12), and element_size runs several times per op.
inline constexpr size_t kElementSizes[] = {
#define EMBER_SIZE(ctype, name, str) sizeof(ctype),
    EMBER_FORALL_SCALAR_TYPES(EMBER_SIZE)
#undef EMBER_SIZE
};
}  // namespace detail

constexpr size_t element_size(ScalarType t) { return detail::kElementSizes[static_cast<int>(t)]; }
std::string_view to_string(ScalarType t);

constexpr bool is_floating_point(ScalarType t) {
  return t == kFloat16 || t == kBFloat16 || t == kFloat32 || t == kFloat64;
}
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == kBool) || t == kUInt8 || t == kInt8 || t == kInt16 ||
         t == kInt32 || t == kInt64;
}
constexpr bool is_reduced_float(ScalarType t) { return t == kFloat16 || t == kBFloat16; }

// 0 = bool, 1 = integer, 2 = floating.
constexpr int type_category(ScalarType t) {
  return t == kBool ? 0 : (is_floating_point(t) ? 2 : 1);
}

// PyTorch's torch.promote_types.
ScalarType promote_types(ScalarType a, ScalarType b);

// Maps a C++ type to its ScalarType.
template <typename T>
struct CppTypeToScalarType;
#define EMBER_CPP_TO_ST(ctype, name, str) \
  template <>                             \
  struct CppTypeToScalarType<ctype> {     \
    static constexpr ScalarType value = ScalarType::name; \
  };
EMBER_FORALL_SCALAR_TYPES(EMBER_CPP_TO_ST)
#undef EMBER_CPP_TO_ST

template <typename T>
constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

// The type arithmetic is done in: float for the 16-bit floats.
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMath<T>::type;

}  // namespace ember

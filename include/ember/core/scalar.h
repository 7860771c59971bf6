// A number passed to an op (like a Python scalar): bool, integer or double.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/core/float_to_int.h"
#include "ember/core/scalar_type.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double), d_(static_cast<double>(v)) {}  // NOLINT
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}                          // NOLINT
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}                     // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}                 // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t to_long() const { return kind_ == Kind::Double ? float_to_int64(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0.0 : i_ != 0; }

  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return kind_ == Kind::Double ? float_to_integral<T>(d_) : static_cast<T>(i_);
    else return static_cast<T>(static_cast<opmath_t<T>>(to_double()));
  }

  // The dtype a Python scalar of this kind has on its own.
  ScalarType default_dtype() const {
    return kind_ == Kind::Double ? kDefaultFloat : (kind_ == Kind::Int ? kInt64 : kBool);
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace ember

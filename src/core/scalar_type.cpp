// dtype names, sizes and promotion.
#include "ember/core/scalar_type.h"

#include "ember/core/error.h"

namespace ember {

std::string_view to_string(ScalarType t) {
  switch (t) {
#define EMBER_NAME(ctype, name, str) \
  case ScalarType::name:             \
    return str;
    EMBER_FORALL_SCALAR_TYPES(EMBER_NAME)
#undef EMBER_NAME
    default:
      return "undefined";
  }
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  int ca = type_category(a), cb = type_category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (is_reduced_float(a) && is_reduced_float(b)) return kFloat32;
    return a > b ? a : b;  // Note [dtype order]
  }
  // Integers: uint8 and int8 need the next signed type.
  if ((a == kUInt8 && b == kInt8) || (a == kInt8 && b == kUInt8)) return kInt16;
  return a > b ? a : b;
}

}  // namespace ember

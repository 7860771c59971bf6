// Out-of-line throw helpers keep the EMBER_CHECK fast path small.
#include "ember/core/error.h"

namespace ember::detail {

void throw_error(const std::string& msg) { throw Error(msg); }
void throw_index_error(const std::string& msg) { throw IndexError(msg); }
void throw_type_error(const std::string& msg) { throw TypeError(msg); }

void throw_internal(const char* file, int line, const char* cond,
                    const std::string& msg) {
  throw Error(fmt::format(
      "internal assert failed at {}:{}: {}{}{}\nThis is a bug in Ember; please "
      "report it.",
      file, line, cond, msg.empty() ? "" : ": ", msg));
}

}  // namespace ember::detail

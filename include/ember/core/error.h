// Errors: EMBER_CHECK for user mistakes (what was expected, what was received,
// a hint), EMBER_ASSERT for broken internal invariants (a bug in Ember).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace ember {

// Thrown for every user-facing error; the message is complete on its own.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when an index or dim is out of range (PyTorch's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

// Thrown when a dtype is not supported by an op (PyTorch's TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_error(const std::string& msg);
[[noreturn]] void throw_index_error(const std::string& msg);
[[noreturn]] void throw_type_error(const std::string& msg);
[[noreturn]] void throw_internal(const char* file, int line, const char* cond,
                                 const std::string& msg);
}  // namespace detail

}  // namespace ember

#define EMBER_CHECK(cond, ...)                                        \
  do {                                                                \
    if (!(cond)) [[unlikely]]                                         \
      ::ember::detail::throw_error(fmt::format(__VA_ARGS__));         \
  } while (0)

#define EMBER_CHECK_INDEX(cond, ...)                                  \
  do {                                                                \
    if (!(cond)) [[unlikely]]                                         \
      ::ember::detail::throw_index_error(fmt::format(__VA_ARGS__));   \
  } while (0)

#define EMBER_CHECK_TYPE(cond, ...)                                   \
  do {                                                                \
    if (!(cond)) [[unlikely]]                                         \
      ::ember::detail::throw_type_error(fmt::format(__VA_ARGS__));    \
  } while (0)

#define EMBER_ASSERT(cond, ...)                                       \
  do {                                                                \
    if (!(cond)) [[unlikely]]                                         \
      ::ember::detail::throw_internal(__FILE__, __LINE__, #cond,      \
                                      fmt::format("" __VA_ARGS__));   \
  } while (0)

#define EMBER_ERROR(...) ::ember::detail::throw_error(fmt::format(__VA_ARGS__))

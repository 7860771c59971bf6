// Shared by the libFuzzer targets: the input as a file for the loaders that
// take a path, and the one error policy of every target.
//
// Policy: a loader may reject any input, but only with ember::Error (the
// clear, file-naming error users see). Any other exception (std::bad_alloc
// from an unbounded allocation, std::out_of_range from a bare stoul, a YAML or
// JSON library exception leaking out), an EMBER_ASSERT (a bug in Ember by its
// own definition) and every sanitizer report is a finding: it escapes and
// libFuzzer saves the input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "ember/core/error.h"

namespace ember::fuzz {

// One file per process (fork/jobs modes run several), rewritten for each
// input and removed at exit.
class InputFile {
 public:
  explicit InputFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/ember-fuzz-" + std::to_string(getpid()) + suffix;
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(path_.c_str());
      std::abort();  // the harness itself failed, not the loader
    }
    return path_;
  }

 private:
  std::string path_;
};

// Whether e comes from EMBER_ASSERT: throw_internal's message starts with
// this prefix. Only the start is checked (messages quote the input, and
// libFuzzer's comparison hooks would soon put the phrase into one), and with
// a plain loop so that the hooks do not learn the phrase from this check.
inline bool is_internal_assert(const ember::Error& e) {
  static const char kPrefix[] = "internal assert failed at ";
  const char* m = e.what();
  size_t i = 0;
  while (kPrefix[i] != 0 && m[i] == kPrefix[i]) ++i;
  return kPrefix[i] == 0;
}

// Runs body; returns normally when it succeeds or rejects the input with an
// ember::Error, aborts (a finding) when the error is an internal assert.
template <typename F>
void expect_clean_error(F&& body) {
  try {
    body();
  } catch (const ember::Error& e) {
    if (is_internal_assert(e)) {
      std::fprintf(stderr, "fuzz: EMBER_ASSERT failed (a bug in Ember):\n%s\n", e.what());
      std::abort();
    }
  }
}

// A property that must hold for an accepted input (a round trip): prints and
// aborts otherwise.
inline void require(bool cond, const char* what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz: property failed: %s\n", what);
    std::abort();
  }
}

}  // namespace ember::fuzz

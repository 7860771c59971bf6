// Paths the tests read: tests/data, the source tree and the `ember` binary.
// tests/CMakeLists.txt force-includes this header into every test file and
// defines the functions in a file it generates in the build tree. Passing the
// paths as -D flags instead would put this clone's absolute paths into every
// test file's compile command, and ccache could not share those objects
// between clones, worktrees and the fresh-machine root.
#pragma once

namespace ember_test {
const char* data_dir();
const char* source_dir();
const char* cli();
}  // namespace ember_test

#define EMBER_TEST_DATA_DIR (::ember_test::data_dir())
#define EMBER_SOURCE_DIR (::ember_test::source_dir())
#define EMBER_CLI (::ember_test::cli())

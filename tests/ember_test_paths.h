// Paths the tests read: tests/data, the source tree, the `ember` binary and
// examples/custom_model.cpp's binary.
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
const char* custom_model_example();
}  // namespace ember_test

#define EMBER_TEST_DATA_DIR (::ember_test::data_dir())
#define EMBER_SOURCE_DIR (::ember_test::source_dir())
#define EMBER_CLI (::ember_test::cli())
#define EMBER_CUSTOM_MODEL_EXAMPLE (::ember_test::custom_model_example())

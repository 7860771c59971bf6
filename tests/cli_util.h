// Runs the `ember` CLI from a test: its exit code and its stdout + stderr.
// One copy for every CLI test (tests/train, tests/jit, tests/runtime,
// tests/serve); EMBER_CLI comes from ember_test_paths.h.
#pragma once

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace ember::testing {

struct CliResult {
  int code;            // the exit status; -1 when a signal ended it
  std::string output;  // stdout + stderr
  double seconds;      // wall time of the whole command
};

// `PROGRAM ARGS` through the shell (ARGS may redirect or quote); with
// timeout_s > 0 coreutils' timeout ends a hung command (exit code 124).
inline CliResult run_program(const std::string& program, const std::string& args, int timeout_s = 0) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string prefix = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  const std::string cmd = prefix + program + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed: " + cmd, 0.0};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, s};
}

// `ember ARGS`, as run_program.
inline CliResult run_cli(const std::string& args, int timeout_s = 0) { return run_program(EMBER_CLI, args, timeout_s); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace ember::testing

// `ember serve` (issue 17): serve .ember models over the v2 inference
// protocol until SIGINT or SIGTERM.
#pragma once

#include <CLI/CLI.hpp>

#include <csignal>

#include <optional>
#include <string>
#include <vector>

#include "ember/serve/server.h"

namespace ember::cli {

class ServeCommand {
 public:
  explicit ServeCommand(CLI::App& app);
  // The exit code when `serve` was chosen, else nullopt.
  std::optional<int> run();

 private:
  CLI::App* serve_ = nullptr;
  std::vector<std::string> models_;
  serve::ServerOptions options_;
  std::string max_body_ = "16MiB";
};

// Blocks SIGINT and SIGTERM in this thread and every thread started after
// (the server's), so that only a waiter calling sigwait receives them and
// the stop runs outside a signal handler (`ember serve`, `ember board`).
sigset_t block_stop_signals();

// Called first in main: for `ember serve` without OMP_WAIT_POLICY, sets it
// to PASSIVE and re-executes the program (Note [serve wait policy]).
void use_passive_openmp_for_serve(int argc, char** argv);

}  // namespace ember::cli

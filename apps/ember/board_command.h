// `ember board [ROOT] [--host 127.0.0.1] [--port 6006]`: the web page over
// the runs under ROOT (serve/board.h) until SIGINT or SIGTERM.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

#include "ember/serve/board.h"

namespace ember::cli {

class BoardCommand {
 public:
  explicit BoardCommand(CLI::App& app);
  // The exit code when `board` was chosen, else nullopt.
  std::optional<int> run();

 private:
  CLI::App* board_ = nullptr;
  serve::BoardOptions options_;
};

}  // namespace ember::cli

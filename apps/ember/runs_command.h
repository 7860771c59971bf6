// `ember runs [ROOT] [--json]`: the runs under ROOT (default runs/, the
// trainer's log.root) with status, epochs, best metric, duration and the
// config keys that differ between them. Registered by main.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace ember::cli {

class RunsCommand {
 public:
  explicit RunsCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  std::string root_ = "runs";
  bool json_ = false;
};

}  // namespace ember::cli

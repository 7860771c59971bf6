// `ember info [RUN_DIR]`: this build and machine, or what a run recorded
// about its own (env.json: versions, commit, compiler, CPU, threads, seed,
// host). Registered by main.cpp like ConvertCommand.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace ember::cli {

class InfoCommand {
 public:
  explicit InfoCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  std::string run_dir_;
};

}  // namespace ember::cli

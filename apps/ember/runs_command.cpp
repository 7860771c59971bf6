#include "runs_command.h"

#include <filesystem>
#include <iostream>

#include "ember/train/config.h"
#include "ember/train/runs.h"

namespace ember::cli {

RunsCommand::RunsCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("runs", "list the runs under ROOT: status, epochs, best metric, duration and the config "
                                    "keys that differ between them");
  cmd_->add_option("root", root_, "folder of run directories (the trainer's log.root)")->capture_default_str();
  cmd_->add_flag("--json", json_, "print a JSON array instead of a table");
}

std::optional<int> RunsCommand::run() {
  if (!*cmd_) return std::nullopt;
  if (!std::filesystem::is_directory(root_))
    throw train::ConfigError(fmt::format("runs: '{}' is not a folder (runs go to log.root, by default runs/)", root_));
  std::vector<train::RunSummary> runs = train::list_runs(root_);
  if (json_) {
    std::cout << train::runs_json(runs);
    return 0;
  }
  if (runs.empty()) {
    std::cout << fmt::format("no runs under {}\n", root_);
    return 0;
  }
  std::cout << train::runs_table(runs);
  return 0;
}

}  // namespace ember::cli

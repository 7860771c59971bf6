#include "info_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ember/core/parallel.h"
#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/zoo.h"

namespace ember::cli {

namespace {

namespace fs = std::filesystem;

// env.json's entries in file order, one a line, the values in one column.
void print_environment(const std::string& run_dir) {
  const fs::path path = fs::path(run_dir) / "env.json";
  std::ifstream in(path);
  if (!in)
    throw train::ConfigError(fmt::format("info: '{}' has no env.json; give a run directory that `ember train` "
                                         "wrote (`ember runs` lists them)", run_dir));
  const nlohmann::ordered_json env = nlohmann::ordered_json::parse(in, nullptr, false);
  EMBER_CHECK(!env.is_discarded() && env.is_object(), "info: {} is not a JSON object", path.string());
  size_t width = 0;
  for (const auto& [key, value] : env.items()) width = std::max(width, key.size());
  std::cout << fmt::format("{} (env.json: what the run ran on)\n", run_dir);
  for (const auto& [key, value] : env.items())
    std::cout << fmt::format("  {:<{}}  {}\n", key, width, value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

InfoCommand::InfoCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("info", "print build and machine information, or with RUN_DIR what that run ran on "
                                    "(its env.json)");
  cmd_->add_option("run", run_dir_, "a run directory (log.root/<name>-<timestamp>)")->type_name("RUN_DIR");
}

std::optional<int> InfoCommand::run() {
  if (!*cmd_) return std::nullopt;
  if (!run_dir_.empty()) {
    print_environment(run_dir_);
    return 0;
  }
  std::cout << fmt::format("ember {}\nthreads: {}\nmodels: {}\n", version(), get_num_threads(),
                           fmt::join(train::model_names(), ", "));
  return 0;
}

}  // namespace ember::cli

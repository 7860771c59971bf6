// `ember infer` and `ember bench` (issue 14): run a .ember model through
// runtime::Session on files, or time it per batch size and thread count.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ember::cli {

class RuntimeCommands {
 public:
  explicit RuntimeCommands(CLI::App& app);
  // The exit code of the chosen subcommand, or nullopt when it is neither.
  std::optional<int> run();

 private:
  CLI::App* infer_ = nullptr;
  CLI::App* bench_ = nullptr;
  std::string model_, output_;
  std::vector<std::string> inputs_;
  int64_t batch_size_ = 64;
  std::string batch_sizes_ = "1,8,64,256", threads_ = "1,2", levels_;
  double seconds_ = 0.5;
  bool simulate_ = false;  // bench dist
  int steps_ = 10;
};

}  // namespace ember::cli

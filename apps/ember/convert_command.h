// `ember convert IN OUT` (issue 16): PyTorch checkpoints (.pt/.pth) and NumPy
// .npz files to safetensors. Registered by main.cpp like JitCommands.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace ember::cli {

class ConvertCommand {
 public:
  explicit ConvertCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  std::string input_, output_, strip_;
};

}  // namespace ember::cli

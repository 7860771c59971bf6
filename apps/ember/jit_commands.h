// `ember export` and `ember inspect` (issue 14): registered on the CLI app by
// main.cpp, run after parsing when one of them was chosen.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "quantize_export.h"

namespace ember::cli {

class JitCommands {
 public:
  explicit JitCommands(CLI::App& app);
  // The exit code of the chosen subcommand, or nullopt when it is none of these.
  // Errors propagate as exceptions (main maps them to exit codes).
  std::optional<int> run();

 private:
  CLI::App* export_ = nullptr;
  CLI::App* inspect_ = nullptr;
  std::string target_, checkpoint_ = "best", output_, model_path_, dynamic_, format_ = "ember";
  int opset_ = 17;  // jit::kOnnxDefaultOpset
  bool no_verify_ = false;
  int optimize_ = 1;
  QuantizeOptions quantize_;
};

}  // namespace ember::cli

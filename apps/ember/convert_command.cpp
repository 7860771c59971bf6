#include "convert_command.h"

#include <cstdio>

#include "ember/io/npy.h"
#include "ember/io/pytorch.h"
#include "ember/io/safetensors.h"

namespace ember::cli {

ConvertCommand::ConvertCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("convert", "convert a PyTorch checkpoint (.pt/.pth) or .npz to .safetensors");
  cmd_->add_option("input", input_, "model.pt, model.pth or arrays.npz")->required();
  cmd_->add_option("output", output_, "model.safetensors")->required();
  cmd_->add_option("--strip-prefix", strip_, "remove this key prefix (e.g. module.)");
}

std::optional<int> ConvertCommand::run() {
  if (!*cmd_) return std::nullopt;
  auto ends = [&](const char* s) {
    const std::string e(s);
    return input_.size() >= e.size() && input_.compare(input_.size() - e.size(), e.size(), e) == 0;
  };
  StateDict sd;
  if (ends(".npz")) {
    for (const auto& [k, t] : io::load_npz(input_))
      sd.insert(!strip_.empty() && k.rfind(strip_, 0) == 0 ? k.substr(strip_.size()) : k, t);
  } else {
    sd = io::pytorch_state_dict(io::load_pytorch(input_), strip_);
  }
  EMBER_CHECK(!sd.empty(), "convert: '{}' holds no tensors", input_);
  safetensors::save_file(sd, output_, {{"converted_from", input_}});
  std::printf("wrote %zu tensors to %s\n", sd.size(), output_.c_str());
  return 0;
}

}  // namespace ember::cli

// model.init_from: start a run (or `ember eval CONFIG`) from weights trained
// elsewhere — a PyTorch state_dict (.pt/.pth/.bin, torch.save's zip format),
// a .safetensors file or an Ember checkpoint (.ckpt).
#pragma once

#include <string>

#include "ember/nn/module.h"

namespace ember::train {

// Loads `path` into `model` strictly (every key present, every shape equal);
// a "module." prefix (DataParallel / DDP) is stripped. An error names the
// file and what does not fit. An empty path does nothing.
void load_initial_weights(nn::Module& model, const std::string& path);

}  // namespace ember::train

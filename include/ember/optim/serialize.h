// Saving and loading an optimizer's state_dict as a safetensors file in one
// call, like torch.save(optimizer.state_dict(), path) and
// optimizer.load_state_dict(torch.load(path)); the sibling of nn/serialize.h.
//
//   optim::save(optimizer, "optim.safetensors");
//   optim::load(optimizer, "optim.safetensors");
//
// Per-parameter state is stored as tensors; the groups' options (lr, betas,
// eps, ...) as metadata in shortest round-trip decimal, so every option
// reads back bit for bit (eps=1e-8 stays 1e-8).
#pragma once

#include <string>

#include "ember/optim/optimizer.h"

namespace ember::optim {

inline constexpr const char* kOptimizerFileFormat = "ember-optimizer/1";

// Writes state atomically (see safetensors::save_file).
void save(const OptimizerStateDict& state, const std::string& path);
// optimizer.state_dict(), recording the optimizer's name ("Adam").
void save(const Optimizer& optimizer, const std::string& path);
// Reads a file save() wrote; errors name the file.
OptimizerStateDict load_state_dict(const std::string& path);
// load_state_dict(path) into optimizer; a file saved from another kind of
// optimizer (SGD's state into Adam) raises naming both.
void load(Optimizer& optimizer, const std::string& path);

}  // namespace ember::optim

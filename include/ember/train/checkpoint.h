// Training checkpoints: one safetensors file holding the model ("model.*"),
// the optimizer state ("optim.*"), the RNG state ("rng.global") and a
// metadata block (epoch, step, scheduler and trainer state as JSON, the
// resolved config, the metrics so far, Ember's version). Written
// atomically: a crash or a full disk leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ember/io/state_dict.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"

namespace ember::train {

inline constexpr const char* kCheckpointFormat = "ember-checkpoint/1";

struct Checkpoint {
  StateDict model;
  optim::OptimizerStateDict optimizer;
  optim::SchedulerState scheduler;
  Tensor rng_state;          // default_generator().get_state()
  int64_t epoch = 0;         // epochs completed
  int64_t step = 0;          // optimizer steps taken
  std::string config_yaml;   // resolved config
  std::string metrics_csv;   // MetricsTable::to_csv() of the completed epochs
  std::string trainer_json;  // best metric, early-stopping state, ...
  std::string ember_version;
};

void save_checkpoint(const Checkpoint& ckpt, const std::string& path);
// Throws ember::Error naming the file when it is missing, corrupt or not an
// Ember checkpoint.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ember::train

// Multirun (Hydra's --multirun): `key=a,b` overrides sweep their values, and
// the grid of every combination runs one job after another, each in its own
// run directory under one sweep folder, with a table at the end.
//
//   ember train -m configs/fashion_mnist_mlp.yaml model=cnn,mlp optim.lr=1e-3,3e-4
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "ember/train/trainer.h"

namespace ember::train {

// One swept key ("optim.lr", or a group such as "model") and its values.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

struct Sweep {
  std::vector<SweepAxis> axes;
  // The override list of each job: the fixed overrides and one value of
  // each axis, in command-line order. Jobs follow the cartesian product
  // with the first swept key varying slowest (Python's itertools.product).
  std::vector<std::vector<std::string>> jobs;
  std::vector<std::vector<std::string>> values;  // per job: the swept values, one per axis
};

// Splits "key=a,b,c" at the commas outside brackets and quotes
// ("model.hidden=[64,64],[128]" sweeps two lists). Throws ConfigError for an
// empty item or a key swept twice.
Sweep expand_sweep(const std::vector<std::string>& overrides);

struct MultirunJob {
  std::vector<std::string> values;  // the swept values
  std::string run_dir;
  std::string status;  // finished, failed, interrupted, not run
  std::string monitor;
  double best = 0;     // NaN when no epoch finished
  std::string error;
};

struct MultirunResult {
  std::string sweep_dir;
  std::vector<SweepAxis> axes;
  std::vector<MultirunJob> jobs;
  int interrupt_signal = 0;  // the Ctrl-C/SIGTERM that stopped the sweep
  bool all_finished() const;
};

// Validates every job's config first (a ConfigError names the job before
// anything trains), then trains each in turn. A job that fails is recorded
// and the others still run; an interrupt stops the sweep after saving the
// job in progress. `options` applies to every job (its run_dir is ignored).
MultirunResult multirun(const std::string& config_path, const std::vector<std::string>& overrides,
                        const TrainOptions& options);

// The table: run directory (relative to the sweep folder), one column per
// swept key, the best value of the checkpoint metric, and the status.
std::string multirun_table(const MultirunResult& result);

}  // namespace ember::train

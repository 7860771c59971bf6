// status.json: what a run directory records about the run's progress and
// outcome, so that `ember runs` and a multirun's table read it without
// loading checkpoints. Written atomically by the trainer (rank 0) when the
// run starts, after every epoch, and when it ends, fails or is interrupted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ember::train {

struct RunStatus {
  // running, finished, interrupted or failed. A "running" run whose process
  // is gone (killed: it could not write its end) reads back as failed.
  std::string status = "running";
  int64_t pid = 0;
  std::string host;
  std::string started;  // UTC, ISO 8601, when the run was created
  std::string updated;  // when this file was last written
  int64_t epoch = 0;    // epochs completed
  int64_t epochs = 0;   // train.epochs
  std::string monitor;  // the metric that selects best.ckpt
  double best = 0;      // NaN until an epoch finished
  int64_t best_epoch = 0;
  double seconds = 0;   // wall time of every process that ran the run
  bool stopped_early = false;
  std::string error;    // why it failed
};

void write_run_status(const std::string& run_dir, const RunStatus& status);
// RUN_DIR/status.json, or nullopt when there is none. A malformed file
// gives status "unknown" with the reason in `error`. A "running" status
// written on this host by a process that no longer exists becomes "failed".
std::optional<RunStatus> read_run_status(const std::string& run_dir);

}  // namespace ember::train

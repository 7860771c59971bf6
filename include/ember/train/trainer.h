// The training workflow: config in, run directory out.
//
//   Config c = load_config("configs/fashion_mnist_cnn.yaml", {"optim.lr=3e-4"});
//   TrainResult r = Trainer(c).fit();          // runs/<name>-<timestamp>/
//   TrainResult r2 = Trainer::resume(r.run_dir).fit();
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/train/config.h"
#include "ember/train/resume.h"

namespace ember::train {

// A training run that cannot continue (non-finite loss, I/O failure); the
// `ember` command exits with 1.
class RunError : public Error {
 public:
  using Error::Error;
};

struct TrainOptions {
  std::ostream* out = nullptr;  // terminal output (default std::cout); train.log gets the same lines
  // Stop (as if interrupted) after this many epochs in this process; 0: no
  // limit. A later resume continues exactly.
  int64_t stop_after_epochs = 0;
  std::string run_dir;  // explicit run directory (default runs/<name>-<timestamp>)
  // Trainer::resume: what starts afresh instead of coming from last.ckpt.
  ResumeResets resets;
  // The command that started this process, for the run's history
  // (history.yaml, the report); empty: "(C++ API)".
  std::string command_line;
  // How the user invokes the program, for the resume command the log prints
  // ("<program> train --resume RUN_DIR"): argv[0] as typed, so a program of
  // the user's own (ember::cli::main) names itself.
  std::string program = "ember";
  // Ctrl-C / SIGTERM stop after the current optimizer step and save
  // last.ckpt (the `ember` command sets this; Note [interrupts]). A world of
  // one only: ranks would stop at different steps.
  bool handle_interrupts = false;
  // Called after every training batch (epoch index from 0, batch index).
  std::function<void(int64_t epoch, int64_t batch)> on_batch_end;
  // The data-parallel job this process is a rank of (null: a world of one).
  // More than one rank needs dist.enabled=true: the model is wrapped in
  // DistributedDataParallel, the train set is sharded per rank, metrics are
  // reduced, and only rank 0 writes the run directory (rank N logs to
  // rank-N.log in it).
  distributed::ProcessGroupPtr group;
};

struct TrainResult {
  std::string run_dir;
  int64_t epochs_completed = 0;
  bool stopped_early = false;
  bool finished = false;  // all epochs done or stopped early (not interrupted)
  int interrupt_signal = 0;  // SIGINT or SIGTERM when a signal stopped the run (handle_interrupts)
  std::vector<std::pair<std::string, double>> test_metrics;  // with best.ckpt's weights
};

class Trainer {
 public:
  explicit Trainer(Config config, TrainOptions options = {});
  // A run continued from RUN_DIR/last.ckpt, with the config stored there
  // and `overrides` applied to it (e.g. train.epochs=20 to train longer).
  // Each override takes effect from the next step or is refused with a
  // ConfigError naming it (plan_resume, Note [resume overrides]).
  static Trainer resume(const std::string& run_dir, TrainOptions options = {},
                        const std::vector<std::string>& overrides = {});
  ~Trainer();
  Trainer(Trainer&&) noexcept;

  // Trains until train.epochs, early stopping or an interrupt. Rank 0
  // records the run's state in RUN_DIR/status.json (run_status.h).
  TrainResult fit();

 private:
  TrainResult fit_run();
  struct State;
  std::unique_ptr<State> s_;
};

struct EvalResult {
  std::string split;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::vector<int64_t>> confusion;
};

// Loads RUN_DIR's best.ckpt (or a checkpoint file) and evaluates it in eval
// mode under no-grad on `split` ("test", "val" or "train"); writes
// eval_<split>.json next to best.ckpt, eval_<name>_<split>.json next to any
// other checkpoint <name>.ckpt.
EvalResult evaluate(const std::string& run_dir_or_checkpoint, const std::string& split, std::ostream& out);

// `ember eval CONFIG.yaml model.init_from=WEIGHTS [key=value ...]`: the
// config's model with weights trained elsewhere (a PyTorch state_dict, a
// .safetensors file), evaluated on the config's data; nothing is written.
EvalResult evaluate_config(const std::string& config_path, const std::vector<std::string>& overrides,
                           const std::string& split, std::ostream& out);

}  // namespace ember::train

// The experiment schema: every option the trainer reads, with its default
// and help text (what `ember train --help` prints and config.yaml records).
#include "ember/train/config.h"
#include "ember/train/data_setup.h"
#include "ember/train/zoo.h"

namespace ember::train {

namespace {

using F = std::vector<double>;
using I = std::vector<int64_t>;

Schema base_schema() {
  return Schema{
      {"model.name", ValueType::String, std::string("cnn"), "model of the zoo (or one registered by the program)"},
      {"model.init_from", ValueType::String, std::string(""),
       "start from these weights: a PyTorch state_dict (.pt/.pth), .safetensors or .ckpt (strict keys and shapes)"},

      {"optim.name", ValueType::String, std::string("adam"), "optimizer",
       {"sgd", "adam", "adamw", "rmsprop", "adagrad"}},
      {"optim.lr", ValueType::Float, 1e-3, "learning rate", {}, "(0, inf)"},
      {"optim.weight_decay", ValueType::Float, 0.0, "L2 penalty (decoupled for adamw)", {}, "[0, inf)"},
      {"optim.momentum", ValueType::Float, 0.0, "momentum (sgd, rmsprop)", {}, "[0, inf)"},
      {"optim.nesterov", ValueType::Bool, false, "Nesterov momentum (sgd)"},
      {"optim.betas", ValueType::FloatList, F{0.9, 0.999}, "Adam betas", {}, "[0, 1)", 2},
      {"optim.eps", ValueType::Float, 1e-8, "denominator epsilon (adam, adamw, rmsprop, adagrad)", {}, "[0, inf)"},
      {"optim.alpha", ValueType::Float, 0.99, "smoothing constant (rmsprop)", {}, "[0, inf)"},
      {"optim.no_decay_norm_and_bias", ValueType::Bool, false,
       "param groups: no weight decay for biases and normalisation weights"},

      {"schedule.name", ValueType::String, std::string("none"), "learning-rate schedule, stepped once per epoch "
       "(onecycle: per step; plateau: on the checkpoint metric)",
       {"none", "step", "multistep", "exponential", "cosine", "linear", "onecycle", "plateau"}},
      {"schedule.warmup_steps", ValueType::Int, int64_t{0}, "linear warm-up over this many optimizer steps, "
       "scaling the schedule's lr", {}, "[0, inf)"},
      {"schedule.warmup_epochs", ValueType::Int, int64_t{0}, "warm-up in epochs (counted in steps; or set "
       "warmup_steps)", {}, "[0, inf)"},
      {"schedule.warmup_max_fraction", ValueType::Float, 0.1, "warm-up is capped to this fraction of the run's "
       "steps", {}, "[0, 1]"},
      {"schedule.warmup_start_factor", ValueType::Float, 0.1, "lr factor at the start of warmup", {}, "(0, 1]"},
      {"schedule.step_size", ValueType::Int, int64_t{10}, "epochs per decay (step)", {}, "[1, inf)"},
      {"schedule.gamma", ValueType::Float, 0.1, "decay factor (step, multistep, exponential)", {}, "[0, inf)"},
      {"schedule.milestones", ValueType::IntList, I{}, "epochs at which to decay (multistep)", {}, "[0, inf)"},
      {"schedule.t_max", ValueType::Int, int64_t{0}, "cosine period in epochs (0: train.epochs)",
       {}, "[0, inf)"},
      {"schedule.eta_min", ValueType::Float, 0.0, "minimum lr (cosine)", {}, "[0, inf)"},
      {"schedule.end_factor", ValueType::Float, 0.0, "final lr factor (linear)", {}, "[0, 1]"},
      {"schedule.max_lr", ValueType::Float, 0.0, "peak lr (onecycle; 0: 10 x optim.lr)", {}, "[0, inf)"},
      {"schedule.factor", ValueType::Float, 0.1, "decay factor (plateau)", {}, "[0, 1)"},
      {"schedule.patience", ValueType::Int, int64_t{3}, "epochs without improvement before decaying (plateau)",
       {}, "[0, inf)"},

      {"train.epochs", ValueType::Int, int64_t{10}, "number of epochs", {}, "[1, inf)"},
      {"train.seed", ValueType::Int, int64_t{0}, "seed of initialisation, data order, dropout and augmentation"},
      {"train.deterministic", ValueType::Bool, true,
       "same seed + same threads => bitwise-identical results (Ember's kernels are deterministic); the thread "
       "count stays fixed. false with train.threads 0: fewer threads while other processes hold CPUs (faster on a "
       "shared machine, not bitwise-repeatable)"},
      {"train.threads", ValueType::Int, int64_t{0},
       "intra-op threads (0: OMP_NUM_THREADS, else the affinity mask's CPUs capped by the cgroup CPU quota)", {},
       "[0, 1024]"},
      {"train.grad_accum_steps", ValueType::Int, int64_t{1}, "batches per optimizer step (effective batch = "
       "batch_size x steps)", {}, "[1, inf)"},
      {"train.grad_clip_norm", ValueType::Float, 0.0, "clip the global gradient norm to this (0: off)", {}, "[0, inf)"},
      {"train.mixed_precision", ValueType::String, std::string("none"), "autocast matmul/conv to bf16 "
       "with float32 master weights", {"none", "bf16"}},
      {"train.nonfinite_loss", ValueType::String, std::string("stop"), "what to do on a NaN/Inf loss",
       {"stop", "skip"}},
      {"train.label_smoothing", ValueType::Float, 0.0, "label smoothing of the cross-entropy loss", {}, "[0, 1]"},
      {"train.top_k", ValueType::Int, int64_t{5}, "also report top-k accuracy (0: off; only when k < classes)",
       {}, "[0, inf)"},
      {"train.early_stopping.monitor", ValueType::String, std::string(""), "metric to watch (e.g. val_loss; "
       "empty: off)"},
      {"train.early_stopping.mode", ValueType::String, std::string("auto"), "min, max, or auto (max for "
       "accuracy/precision/recall/f1, else min)", {"auto", "min", "max"}},
      {"train.early_stopping.patience", ValueType::Int, int64_t{5}, "epochs without improvement before stopping",
       {}, "[1, inf)"},
      {"train.early_stopping.min_delta", ValueType::Float, 0.0, "smallest change that counts as improvement",
       {}, "[0, inf)"},
      {"train.checkpoint.monitor", ValueType::String, std::string("val_loss"), "metric that selects best.ckpt "
       "(falls back to train_loss without a validation split)"},
      {"train.checkpoint.mode", ValueType::String, std::string("auto"), "min, max, or auto",
       {"auto", "min", "max"}},
      {"train.checkpoint.every", ValueType::Int, int64_t{1}, "write last.ckpt every N epochs (0: only at the end; "
       "also when the run stops early or is interrupted)", {}, "[0, inf)"},
      {"train.eval_test_every", ValueType::Int, int64_t{0}, "also evaluate the test split every N epochs with the "
       "current weights (test_* columns in metrics.csv, nan in the other epochs; 0: only at the end, with best.ckpt)",
       {}, "[0, inf)"},

      {"dist.enabled", ValueType::Bool, false, "data-parallel training across the ranks of an MPI launch "
       "(mpirun -np N or srun -n N ember train ...); data.batch_size is per rank"},
      {"dist.drop_last", ValueType::Bool, false, "the distributed sampler drops the tail that does not divide "
       "among the ranks (false: pads by repeating the start, as PyTorch's DistributedSampler)"},
      {"dist.sync_batchnorm", ValueType::Bool, false, "BatchNorm statistics over the global batch (SyncBatchNorm) "
       "instead of per rank"},
      {"dist.find_unused_parameters", ValueType::Bool, false, "allow parameters that get no gradient in a step"},
      {"dist.bucket_cap_mb", ValueType::Float, 25.0, "gradient bucket size in MiB (the first bucket is 1 MiB)",
       {}, "(0, inf)"},

      {"log.root", ValueType::String, std::string("runs"), "folder that holds run directories"},
      {"log.name", ValueType::String, std::string(""), "run name (empty: the config file's name)"},
      {"log.interval", ValueType::Int, int64_t{50}, "steps between progress lines when not on a terminal",
       {}, "[1, inf)"},
      {"log.steps_every", ValueType::Int, int64_t{50}, "optimizer steps between rows of steps.csv (loss, accuracy, "
       "macro F1, lr and images/s over the steps since the previous row; 0: no steps.csv)", {}, "[0, inf)"},
      {"log.timing", ValueType::Bool, true, "add epoch time, images/s, data wait and peak memory to metrics.csv "
       "(measurements: they differ between runs; everything else is bitwise reproducible)"},
      {"log.report_every", ValueType::Int, int64_t{1}, "write curves.svg and report.html every N epochs (and at "
       "the end; metrics.csv is written every epoch)", {}, "[1, inf)"},
      {"log.progress", ValueType::String, std::string("auto"), "progress display (auto: on a terminal "
       "one line redrawn to fit its width, bar: always that, plain: a line every log.interval steps)",
       {"auto", "bar", "plain", "none"}},
  };
}

}  // namespace

Schema experiment_schema(const std::string& model_name) {
  Schema schema = base_schema();
  schema.add(data_schema());
  schema.add(find_model(model_name).options);
  return schema;
}

}  // namespace ember::train

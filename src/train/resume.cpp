// Note [resume overrides]: a resumed run restores the model, the optimizer
// (with its hyper-parameters and moments), the LR schedule, the RNG, the
// best-metric and early-stopping trackers and the data split from last.ckpt
// and the seed. An override of a setting that is restored would be accepted
// and silently lose to the checkpoint (the report would show a value that
// never ran), so each key falls in one class:
//  - applied: read afresh every step or epoch (threads, workers, clipping,
//    precision, logging, patience...): takes effect from the next step;
//  - train.epochs: applied when it leaves epochs to run; raising it past a
//    finished run continues that run (Lightning's max_epochs);
//  - optim.* needs --reset optimizer (a fresh optimizer, moments lost, and a
//    restarted schedule: the schedule drives the optimizer's lr);
//    schedule.* needs --reset schedule (the schedule restarts from its first
//    step, warm-up included);
//  - everything else (the model, the data and its split, the seed, what the
//    trackers monitor, accumulation, which changes the steps per epoch) is
//    refused: the checkpoint was made with it.
// A change that could only apply to epochs that will not run (the run is
// finished and train.epochs is not raised) is refused too.
#include "ember/train/resume.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace ember::train {

namespace {

constexpr std::array<std::string_view, 16> kApplied = {
    "train.threads",          "train.deterministic",        "train.grad_clip_norm",         "train.mixed_precision",
    "train.nonfinite_loss",   "train.label_smoothing",      "train.top_k",                  "train.early_stopping.patience",
    "train.early_stopping.min_delta", "train.checkpoint.every", "data.num_workers",           "data.prefetch_factor",
    "data.eval_batch_size",   "data.cache",                 "log.interval",                 "log.progress"};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool applied(std::string_view key) {
  // log.root and log.name only name a new run's directory; log.timing is display.
  return std::find(kApplied.begin(), kApplied.end(), key) != kApplied.end() || starts_with(key, "log.");
}

std::string assignment(const ResumeChange& c) { return fmt::format("{}={}", c.key, c.after); }

}  // namespace

ResumeResets parse_resets(const std::vector<std::string>& values) {
  ResumeResets r;
  for (const std::string& list : values) {
    size_t start = 0;
    while (start <= list.size()) {
      const size_t end = std::min(list.find(',', start), list.size());
      const std::string v = list.substr(start, end - start);
      if (v == "optimizer") r.optimizer = true;
      else if (v == "schedule") r.schedule = true;
      else throw ConfigError(fmt::format("--reset: expected optimizer or schedule, got '{}'", v));
      start = end + 1;
    }
  }
  return r;
}

ResumePlan plan_resume(const Config& before, const Config& after, const ResumedRun& run, ResumeResets resets) {
  ResumePlan plan;
  plan.resets = resets;
  for (const OptionSpec& o : after.schema().options()) {
    const Value& b = before.value(o.key);
    const Value& a = after.value(o.key);
    if (a != b) plan.changes.push_back({o.key, value_to_text(b), value_to_text(a)});
  }
  const int64_t epochs = after.get_int("train.epochs");
  bool more_epochs = false;
  for (const ResumeChange& c : plan.changes) {
    if (c.key == "train.epochs") {
      if (epochs <= run.epochs_done)
        throw ConfigError(fmt::format(
            "--resume: train.epochs={}: the run has completed {} epoch{} already; give more than {} to continue it",
            epochs, run.epochs_done, run.epochs_done == 1 ? "" : "s", run.epochs_done));
      more_epochs = true;
    } else if (starts_with(c.key, "optim.")) {
      if (!resets.optimizer)
        throw ConfigError(fmt::format(
            "--resume: {} (was {}): the optimizer and its {} come from last.ckpt, so the new value would not run; "
            "add --reset optimizer to start a fresh optimizer (its moments are lost) with it from the next step",
            assignment(c), c.before, c.key));
    } else if (starts_with(c.key, "schedule.")) {
      if (!resets.schedule && !resets.optimizer)
        throw ConfigError(fmt::format(
            "--resume: {} (was {}): the LR schedule's state comes from last.ckpt, so the new value would not run; "
            "add --reset schedule to restart the schedule (warm-up included) with it from the next step",
            assignment(c), c.before));
    } else if (!applied(c.key)) {
      throw ConfigError(fmt::format(
          "--resume: {} cannot change on resume (the run was trained with {}={}): last.ckpt holds {}; start a new "
          "run with it instead",
          c.key, c.key, c.before,
          starts_with(c.key, "model.") ? "the model built with it"
          : starts_with(c.key, "data.") ? "the state of the data it defines (split, batches per epoch)"
                                        : "state that depends on it (the RNG, the metric trackers, the step count)"));
    }
  }
  if (run.finished && !more_epochs && !plan.changes.empty())
    throw ConfigError(fmt::format(
        "--resume: the run finished{} after {} epochs, so {} would not run; raise train.epochs above {} as well to "
        "continue it",
        run.stopped_early ? " (stopped early)" : "", run.epochs_done, assignment(plan.changes.front()),
        run.epochs_done));
  if (run.finished && !more_epochs && (resets.optimizer || resets.schedule))
    throw ConfigError(fmt::format("--resume: the run finished after {} epochs, so --reset has nothing to apply to; "
                                  "raise train.epochs above {} as well to continue it",
                                  run.epochs_done, run.epochs_done));
  // A schedule whose length is train.epochs (cosine without schedule.t_max,
  // linear, onecycle) restored from last.ckpt keeps the old length: the new
  // epochs would run past its end (cosine at eta_min, onecycle refusing to
  // step), not the schedule config.yaml would then show.
  const std::string schedule = after.get_string("schedule.name");
  const bool epoch_long = (schedule == "cosine" && after.get_int("schedule.t_max") == 0) || schedule == "linear" ||
                          schedule == "onecycle";
  if (more_epochs && epoch_long && !resets.schedule && !resets.optimizer)
    throw ConfigError(fmt::format(
        "--resume: train.epochs={} (was {}): the {} schedule restored from last.ckpt spans the {} epochs it was "
        "planned for, so the new epochs would run past its end; add --reset schedule to plan it afresh from the next "
        "step{}",
        epochs, before.get_int("train.epochs"), schedule, before.get_int("train.epochs"),
        schedule == "cosine" ? ", or set schedule.t_max when starting runs you mean to extend" : ""));
  plan.continues_finished_run = run.finished && more_epochs;
  if (resets.optimizer) plan.resets.schedule = true;
  return plan;
}

}  // namespace ember::train

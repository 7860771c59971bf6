// What `ember train --resume RUN key=value [--reset optimizer|schedule]` may
// change, decided before anything loads (Note [resume overrides] in
// src/train/resume.cpp): every override either takes effect from the next
// step or is refused naming the key and why; none is accepted and ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/train/config.h"

namespace ember::train {

// What a resume starts afresh instead of restoring from last.ckpt.
struct ResumeResets {
  bool optimizer = false;  // a new optimizer (no moments) from the config; implies schedule
  bool schedule = false;   // the LR schedule restarts from its first step with the config's settings
};

// Parses "--reset" values: "optimizer", "schedule" or "optimizer,schedule".
ResumeResets parse_resets(const std::vector<std::string>& values);

struct ResumeChange {
  std::string key, before, after;  // values as YAML text
};

// The run's state when it is resumed (from last.ckpt).
struct ResumedRun {
  int64_t epochs_done = 0;
  bool finished = false;       // ran all its epochs, or stopped early
  bool stopped_early = false;
};

struct ResumePlan {
  std::vector<ResumeChange> changes;  // keys whose value differs from the checkpoint's config
  ResumeResets resets;
  bool continues_finished_run = false;  // train.epochs raised past a finished run's epochs
};

// Throws ConfigError naming the key and why when `after` (the checkpoint's
// config with the overrides) asks for something the resume cannot honour.
ResumePlan plan_resume(const Config& before, const Config& after, const ResumedRun& run, ResumeResets resets);

}  // namespace ember::train

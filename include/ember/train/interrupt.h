// Ctrl-C and SIGTERM while a run trains (Note [interrupts] in
// src/train/interrupt.cpp): the first one asks the trainer to stop after the
// current optimizer step and save last.ckpt, so `ember train --resume`
// continues exactly; a second Ctrl-C (or SIGTERM) exits at once.
#pragma once

namespace ember::train {

// Installs the handlers for its lifetime and restores the previous ones.
// One at a time per process (the trainer's fit(), when asked to).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal that asked to stop (SIGINT or SIGTERM), or 0.
  static int requested();
};

}  // namespace ember::train

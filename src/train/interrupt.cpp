// Note [interrupts]: a signal handler may only touch lock-free atomics and
// call async-signal-safe functions, so the first SIGINT/SIGTERM just records
// itself and says so with write(2); the training loop polls requested()
// after each optimizer step (a step boundary: gradients are not half
// accumulated) and checkpoints the epoch in progress. The second one calls
// _exit at once (128 + the signal, as a shell reports it): the previous
// last.ckpt stays whole, because checkpoint writes are atomic renames. The
// flag is process-wide state by nature (a signal reaches the process); it is
// written only by the handler and reset by the guard.
#include "ember/train/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "ember/core/error.h"

namespace ember::train {

namespace {

std::atomic<int> g_requested{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_previous_int, g_previous_term;
std::atomic<bool> g_installed{false};

void say(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_signal(int sig) {
  int expected = 0;
  if (g_requested.compare_exchange_strong(expected, sig)) {
    say(sig == SIGINT ? "\ninterrupted: finishing the current step and saving last.ckpt (Ctrl-C again quits at once)\n"
                      : "\nterminated: finishing the current step and saving last.ckpt\n");
    return;
  }
  say("\ninterrupted again: exiting now; last.ckpt holds the last saved state\n");
  ::_exit(128 + sig);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  EMBER_CHECK(!g_installed.exchange(true), "InterruptGuard: another guard is already installed");
  g_requested.store(0);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or write in progress continues
  sigaction(SIGINT, &sa, &g_previous_int);
  sigaction(SIGTERM, &sa, &g_previous_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed.store(false);
}

int InterruptGuard::requested() { return g_requested.load(std::memory_order_relaxed); }

}  // namespace ember::train

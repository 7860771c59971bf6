// Per-epoch progress: one redrawn line that fits the terminal, plain lines
// otherwise; also the terminal width and the epoch summary's wrapping.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace ember::train {

// What one progress line shows; the formatting below is a pure function of it.
struct ProgressState {
  std::string phase = "train";  // train, val or test
  int64_t epoch = 0, epochs = 0;
  int64_t step = 0, total = 0;
  double loss = 0;        // running loss (NaN until a step counted)
  double rate = 0;        // images per second
  double epoch_eta = 0;   // seconds left in this epoch (NaN: unknown)
  double run_eta = 0;     // seconds left in the run (NaN: unknown)
};

// Note [progress line width]: the line never exceeds `width` columns. Fields
// give way in this order as the width shrinks: the bar narrows (to 10
// columns) and then goes, then the run ETA, then the throughput, then the
// loss, then the epoch ETA; what remains ("epoch 1/2 train 3/5") is cut at
// the width as a last resort.
// Without `bar` (plain lines for logs) the bar is left out at any width.
std::string format_progress_line(int width, const ProgressState& s, bool bar = true);

// Greedy wrap of `text` to `width` columns at field boundaries (two spaces)
// and, inside a field too long for a line, at single spaces; continuation
// lines start with two spaces; a word wider than a line is cut. Each line of
// a multi-line text wraps on its own.
std::string wrap_fields(const std::string& text, int width);

// Columns of the terminal on `fd` (ioctl TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_width(int fd);

class Progress {
 public:
  enum class Style { Bar, Plain, None };
  // `terminal` receives bar redraws (no newline); `line` receives whole
  // lines that also go to train.log. `width` bounds the redrawn line.
  Progress(Style style, int64_t interval, std::function<void(const std::string&)> terminal,
           std::function<void(const std::string&)> line, int width = 80);

  // `epoch` counts from 1. The run ETA assumes the epochs still to come take
  // as long as this one's train phase (plus, from a later phase on, the
  // phases seen so far): an estimate, refined each epoch.
  void start(int64_t epoch, int64_t epochs, int64_t total_steps, std::string phase = "train");
  void update(int64_t step, double running_loss, double images_per_s);
  void finish();  // clears the bar
  // Clears the bar too: an error that ends the phase (a non-finite loss, a
  // failing loader) is then printed on a line of its own.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  ProgressState state(int64_t step, double running_loss, double images_per_s) const;

  Style style_;
  int64_t interval_;
  std::function<void(const std::string&)> terminal_, line_;
  int width_;
  std::string phase_ = "train";
  int64_t epoch_ = 0, epochs_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  double earlier_phases_s_ = 0;  // this epoch's finished phases
  bool drawn_ = false;
};

std::string format_duration(double seconds);  // "1:05", "1:02:03"

}  // namespace ember::train

// Per-epoch progress: a redrawn bar on a terminal, plain lines otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace ember::train {

class Progress {
 public:
  enum class Style { Bar, Plain, None };
  // `terminal` receives bar redraws (no newline); `line` receives whole
  // lines that also go to train.log.
  Progress(Style style, int64_t interval, std::function<void(const std::string&)> terminal,
           std::function<void(const std::string&)> line);

  void start(int64_t epoch, int64_t epochs, int64_t total_steps);
  void update(int64_t step, double running_loss, double images_per_s);
  void finish();  // clears the bar

 private:
  std::string status(int64_t step, double running_loss, double images_per_s) const;

  Style style_;
  int64_t interval_;
  std::function<void(const std::string&)> terminal_, line_;
  int64_t epoch_ = 0, epochs_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

std::string format_duration(double seconds);  // "1:05", "1:02:03"

}  // namespace ember::train

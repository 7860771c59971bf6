#include "progress.h"

#include <fmt/format.h>

#include <cmath>

namespace ember::train {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Progress(Style style, int64_t interval, std::function<void(const std::string&)> terminal,
                   std::function<void(const std::string&)> line)
    : style_(style), interval_(interval > 0 ? interval : 50), terminal_(std::move(terminal)), line_(std::move(line)) {}

void Progress::start(int64_t epoch, int64_t epochs, int64_t total_steps) {
  epoch_ = epoch, epochs_ = epochs, total_ = total_steps;
  start_ = last_draw_ = std::chrono::steady_clock::now();
  drawn_ = false;
}

std::string Progress::status(int64_t step, double running_loss, double images_per_s) const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = step > 0 ? elapsed / static_cast<double>(step) * static_cast<double>(total_ - step) : NAN;
  return fmt::format("loss {:.4f}  {:.0f} img/s  ETA {}", running_loss, images_per_s, format_duration(eta));
}

void Progress::update(int64_t step, double running_loss, double images_per_s) {
  if (style_ == Style::None) return;
  if (style_ == Style::Plain) {
    if (step % interval_ == 0 || step == total_)
      line_(fmt::format("epoch {}/{}  step {}/{}  {}", epoch_, epochs_, step, total_,
                        status(step, running_loss, images_per_s)));
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (step != total_ && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  int filled = total_ > 0 ? static_cast<int>(kWidth * step / total_) : kWidth;
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
  terminal_(fmt::format("\r\033[Kepoch {}/{} [{}] {}/{}  {}", epoch_, epochs_, bar, step, total_,
                        status(step, running_loss, images_per_s)));
}

void Progress::finish() {
  if (style_ == Style::Bar && drawn_) terminal_("\r\033[K");
  drawn_ = false;
}

}  // namespace ember::train

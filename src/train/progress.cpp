#include "progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace ember::train {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

namespace {

constexpr int kMaxBar = 30, kMinBar = 10;

std::string bar_text(int inner, int64_t step, int64_t total) {
  int filled = total > 0 ? static_cast<int>(inner * std::min(step, total) / total) : inner;
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < inner) bar += '>' + std::string(static_cast<size_t>(inner - filled - 1), ' ');
  return " [" + bar + "]";
}

}  // namespace

// Note [progress line width] in progress.h gives the order fields give way in.
std::string format_progress_line(int width, const ProgressState& s, bool bar) {
  const std::string head = fmt::format("epoch {}/{} {} {}/{}", s.epoch, s.epochs, s.phase, s.step, s.total);
  // In display order; dropped from the back of `drop_order` first.
  // A diverging loss (1e30) in scientific notation keeps the line's width.
  std::string loss = !std::isfinite(s.loss)       ? "  loss -"
                     : std::fabs(s.loss) < 1e4 ? fmt::format("  loss {:.4f}", s.loss)
                                               : fmt::format("  loss {:.3e}", s.loss);
  std::string rate = fmt::format("  {:.0f} img/s", s.rate);
  std::string eta = fmt::format("  ETA {}", format_duration(s.epoch_eta));
  std::string run = fmt::format("  run {}", format_duration(s.run_eta));
  std::string* drop_order[] = {&run, &rate, &loss, &eta};
  auto tail = [&] { return loss + rate + eta + run; };
  const auto w = static_cast<size_t>(std::max(width, 1));
  if (bar) {
    const auto room = static_cast<int>(w) - static_cast<int>(head.size() + tail().size()) - 3;
    if (room >= kMinBar) return head + bar_text(std::min(room, kMaxBar), s.step, s.total) + tail();
  }
  for (std::string* field : drop_order) {
    if (head.size() + tail().size() <= w) break;
    field->clear();
  }
  return (head + tail()).substr(0, w);
}

namespace {

std::string wrap_line(const std::string& text, size_t w) {
  // Fields are separated by two spaces; a field keeps its words together.
  std::vector<std::string> fields;
  for (size_t pos = 0; pos <= text.size();) {
    size_t next = text.find("  ", pos);
    if (next == std::string::npos) next = text.size();
    if (next > pos) fields.push_back(text.substr(pos, next - pos));
    pos = next + 2;
  }
  std::string out, line;
  auto emit = [&](const std::string& piece, const char* sep) {
    if (line.empty()) line = out.empty() ? piece : "  " + piece;
    else if (line.size() + std::string_view(sep).size() + piece.size() <= w) line += sep + piece;
    else {
      out += line + "\n";
      line = "  " + piece;
    }
  };
  for (const std::string& f : fields) {
    if (f.size() + 2 <= w) {
      emit(f, "  ");
      continue;
    }
    std::istringstream words(f);  // too long for any line: break at words
    bool first = true;
    for (std::string word; words >> word; first = false) {
      // A word wider than a line (a long path) is cut into pieces that fit.
      for (size_t at = 0; at < word.size(); at += w - 2) emit(word.substr(at, w - 2), at == 0 && first ? "  " : " ");
    }
  }
  return out + line;
}

}  // namespace

std::string wrap_fields(const std::string& text, int width) {
  const auto w = static_cast<size_t>(std::max(width, 8));
  std::string out;
  std::istringstream lines(text);  // each line of a multi-line text on its own
  for (std::string line; std::getline(lines, line);) out += (out.empty() ? "" : "\n") + wrap_line(line, w);
  return out;
}

int terminal_width(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS")) {
    int cols = std::atoi(env);
    if (cols > 0) return cols;
  }
  return 80;
}

Progress::Progress(Style style, int64_t interval, std::function<void(const std::string&)> terminal,
                   std::function<void(const std::string&)> line, int width)
    : style_(style),
      interval_(interval > 0 ? interval : 50),
      terminal_(std::move(terminal)),
      line_(std::move(line)),
      width_(width) {}

void Progress::start(int64_t epoch, int64_t epochs, int64_t total_steps, std::string phase) {
  if (epoch == epoch_ && total_ > 0) earlier_phases_s_ += std::chrono::duration<double>(last_draw_ - start_).count();
  else earlier_phases_s_ = 0;
  epoch_ = epoch, epochs_ = epochs, total_ = total_steps, phase_ = std::move(phase);
  start_ = last_draw_ = std::chrono::steady_clock::now();
  drawn_ = false;
}

ProgressState Progress::state(int64_t step, double running_loss, double images_per_s) const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double per_step = step > 0 ? elapsed / static_cast<double>(step) : NAN;
  double eta = per_step * static_cast<double>(total_ - step);
  double epoch_s = earlier_phases_s_ + per_step * static_cast<double>(total_);
  double run = eta + epoch_s * static_cast<double>(std::max<int64_t>(epochs_ - epoch_, 0));
  return {phase_, epoch_, epochs_, step, total_, running_loss, images_per_s, eta, run};
}

void Progress::update(int64_t step, double running_loss, double images_per_s) {
  if (style_ == Style::None) return;
  auto now = std::chrono::steady_clock::now();
  if (style_ == Style::Plain || step == total_) last_draw_ = now;  // the phase's end, for the next phase's run ETA
  if (style_ == Style::Plain) {
    if (step % interval_ == 0 || step == total_)
      line_(format_progress_line(1 << 16, state(step, running_loss, images_per_s), false));
    return;
  }
  if (step != total_ && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  // One column spare: a line exactly as wide as the terminal wraps the cursor.
  terminal_("\r\033[K" + format_progress_line(width_ - 1, state(step, running_loss, images_per_s)));
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a destructor, maybe during unwinding: a failed redraw is not worth an abort
  }
}

void Progress::finish() {
  if (style_ == Style::Bar && drawn_) terminal_("\r\033[K");
  drawn_ = false;
}

}  // namespace ember::train

// status.json of a run directory (see run_status.h).
#include "ember/train/run_status.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/core/error.h"
#include "ember/io/atomic_file.h"

namespace ember::train {

namespace fs = std::filesystem;

namespace {

std::string this_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return {};
  return buf;
}

// kill(pid, 0) probes without signalling: ESRCH means no such process.
bool process_exists(int64_t pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

void write_run_status(const std::string& run_dir, const RunStatus& s) {
  nlohmann::ordered_json j;
  j["status"] = s.status;
  j["pid"] = s.pid;
  j["host"] = s.host;
  j["started"] = s.started;
  j["updated"] = s.updated;
  j["epoch"] = s.epoch;
  j["epochs"] = s.epochs;
  j["monitor"] = s.monitor;
  // JSON has no NaN: no best yet is null.
  j["best"] = std::isfinite(s.best) ? nlohmann::ordered_json(s.best) : nlohmann::ordered_json();
  j["best_epoch"] = s.best_epoch;
  j["seconds"] = s.seconds;
  j["stopped_early"] = s.stopped_early;
  if (!s.error.empty()) j["error"] = s.error;
  io::write_file_atomic((fs::path(run_dir) / "status.json").string(), j.dump(2) + "\n", "status.json");
}

std::optional<RunStatus> read_run_status(const std::string& run_dir) {
  const fs::path path = fs::path(run_dir) / "status.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  RunStatus s;
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  try {
    if (j.is_discarded() || !j.is_object()) throw std::runtime_error("not a JSON object");
    s.status = j.at("status").get<std::string>();
    s.pid = j.value("pid", int64_t{0});
    s.host = j.value("host", "");
    s.started = j.value("started", "");
    s.updated = j.value("updated", "");
    s.epoch = j.value("epoch", int64_t{0});
    s.epochs = j.value("epochs", int64_t{0});
    s.monitor = j.value("monitor", "");
    s.best = j.contains("best") && j["best"].is_number() ? j["best"].get<double>() : NAN;
    s.best_epoch = j.value("best_epoch", int64_t{0});
    s.seconds = j.value("seconds", 0.0);
    s.stopped_early = j.value("stopped_early", false);
    s.error = j.value("error", "");
  } catch (const std::exception& e) {
    RunStatus bad;
    bad.status = "unknown";
    bad.best = NAN;
    bad.error = fmt::format("{}: {}", path.string(), e.what());
    return bad;
  }
  if (s.status == "running" && s.host == this_host() && !process_exists(s.pid)) {
    s.status = "failed";
    s.error = fmt::format("process {} ended without recording an outcome (killed?)", s.pid);
  }
  return s;
}

}  // namespace ember::train

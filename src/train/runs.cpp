// Listing run directories for `ember runs` (see runs.h).
#include "ember/train/runs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <cstdlib>
#include <sstream>

#include "ember/train/config.h"
#include "ember/train/run_status.h"
#include "text_table.h"

namespace ember::train {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_run_dir(const fs::path& d) {
  return fs::is_regular_file(d / "config.yaml") &&
         (fs::is_regular_file(d / "status.json") || fs::is_regular_file(d / "metrics.csv"));
}

void find_runs(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  if (is_run_dir(dir)) {
    out.push_back(dir);
    return;
  }
  if (depth == 0) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec)) find_runs(e.path(), depth - 1, out);
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string item;
  while (std::getline(s, item, sep)) out.push_back(item);
  return out;
}

// A run from before status.json: what metrics.csv and the config tell.
void from_metrics_csv(const fs::path& dir, RunSummary& r) {
  r.status = fs::exists(dir / "test_metrics.json") ? "finished" : "unknown";
  std::stringstream csv(read_text(dir / "metrics.csv"));
  std::string line;
  if (!std::getline(csv, line)) return;
  const std::vector<std::string> header = split(line, ',');
  std::string monitor =
      r.config.count("train.checkpoint.monitor") ? r.config["train.checkpoint.monitor"] : std::string("val_loss");
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  if (column(monitor) == header.size() && monitor.rfind("val_", 0) == 0) monitor = "train_" + monitor.substr(4);
  const size_t m = column(monitor), t = column("epoch_time_s");
  std::string mode = r.config.count("train.checkpoint.mode") ? r.config["train.checkpoint.mode"] : std::string("auto");
  if (mode == "auto") {
    mode = "min";
    for (const char* up : {"acc", "f1", "precision", "recall"})
      if (monitor.find(up) != std::string::npos) mode = "max";
  }
  double seconds = 0;
  bool timed = t < header.size();
  while (std::getline(csv, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split(line, ',');
    ++r.epoch;
    if (m < cells.size()) {
      const double v = std::strtod(cells[m].c_str(), nullptr);
      if (std::isnan(r.best) || (mode == "max" ? v > r.best : v < r.best)) r.best = v;
      r.monitor = monitor;
    }
    if (timed && t < cells.size()) seconds += std::strtod(cells[t].c_str(), nullptr);
  }
  if (timed) r.seconds = seconds;
}

// test_metrics.json, when the run has one: its numbers for the whole test
// set. A file far larger than a run writes is not read (the board lists
// whatever folders it is pointed at).
void read_results(const fs::path& dir, RunSummary& r) {
  const fs::path p = dir / "test_metrics.json";
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec || size > (size_t{1} << 20)) return;
  const nlohmann::json j = nlohmann::json::parse(read_text(p), nullptr, false);
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.value().is_number() && it.key().rfind("test_", 0) == 0 && it.key().find('[') == std::string::npos)
      r.results[it.key()] = it.value().get<double>();
}

}  // namespace

std::string run_duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "-";
  if (s < 60) return fmt::format("{:.1f}s", s);
  const auto total = static_cast<int64_t>(std::llround(s));
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

std::vector<RunSummary> list_runs(const std::string& root) {
  std::vector<fs::path> dirs;
  find_runs(root, 3, dirs);
  std::vector<RunSummary> runs;
  for (const fs::path& d : dirs) {
    RunSummary r;
    r.dir = d.string();
    r.name = fs::relative(d, root).string();
    if (r.name.empty() || r.name == ".") r.name = d.filename().string();
    r.best = NAN;
    r.seconds = NAN;
    try {
      for (const YamlEntry& e : flatten_yaml(read_text(d / "config.yaml"), (d / "config.yaml").string()))
        r.config[e.key] = e.text;
    } catch (const Error& e) {
      r.error = e.what();
    }
    if (auto st = read_run_status(r.dir)) {
      r.status = st->status;
      r.epoch = st->epoch;
      r.epochs = st->epochs;
      r.monitor = st->monitor;
      r.best = st->best;
      r.seconds = st->seconds;
      r.started = st->started;
      if (!st->error.empty()) r.error = st->error;
    } else {
      from_metrics_csv(d, r);
    }
    read_results(d, r);
    if (r.epochs == 0 && r.config.count("train.epochs"))
      r.epochs = std::strtoll(r.config["train.epochs"].c_str(), nullptr, 10);
    runs.push_back(std::move(r));
  }
  // Oldest first: by start time where recorded, then by name (names end in a timestamp).
  std::stable_sort(runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) {
    if (!a.started.empty() && !b.started.empty() && a.started != b.started) return a.started < b.started;
    return a.name < b.name;
  });
  return runs;
}

std::vector<std::string> differing_keys(const std::vector<RunSummary>& runs) {
  std::set<std::string> keys;
  for (const RunSummary& r : runs)
    for (const auto& [k, v] : r.config) keys.insert(k);
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    const RunSummary& first = runs.front();
    auto f = first.config.find(k);
    for (const RunSummary& r : runs) {
      auto it = r.config.find(k);
      if (it == r.config.end() || f == first.config.end() || it->second != f->second) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

std::string runs_table(const std::vector<RunSummary>& runs) {
  const std::vector<std::string> keys = differing_keys(runs);
  std::string monitor;
  bool one_monitor = true;
  for (const RunSummary& r : runs) {
    if (r.monitor.empty()) continue;
    if (monitor.empty()) monitor = r.monitor;
    else if (r.monitor != monitor) one_monitor = false;
  }
  const std::string best_header = one_monitor && !monitor.empty() ? "best " + monitor : "best";
  std::vector<std::string> header = {"run", "status", "epochs", best_header, "duration"};
  std::vector<bool> right = {false, false, true, one_monitor, true};
  for (const std::string& k : keys) header.push_back(k), right.push_back(false);
  std::vector<std::vector<std::string>> rows;
  for (const RunSummary& r : runs) {
    std::string best = std::isfinite(r.best) ? fmt::format("{:.4f}", r.best) : "-";
    if (!one_monitor && std::isfinite(r.best)) best = r.monitor + " " + best;
    std::vector<std::string> row = {r.name, r.status, fmt::format("{}/{}", r.epoch, r.epochs), best,
                                    run_duration_text(r.seconds)};
    for (const std::string& k : keys) {
      auto it = r.config.find(k);
      row.push_back(it == r.config.end() ? "-" : it->second);
    }
    rows.push_back(std::move(row));
  }
  return text_table(header, rows, right);
}

std::string runs_json(const std::vector<RunSummary>& runs) {
  const std::vector<std::string> keys = differing_keys(runs);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RunSummary& r : runs) {
    nlohmann::ordered_json j;
    j["run"] = r.name;
    j["dir"] = r.dir;
    j["status"] = r.status;
    j["epoch"] = r.epoch;
    j["epochs"] = r.epochs;
    j["monitor"] = r.monitor;
    j["best"] = std::isfinite(r.best) ? nlohmann::ordered_json(r.best) : nlohmann::ordered_json();
    j["seconds"] = std::isfinite(r.seconds) ? nlohmann::ordered_json(r.seconds) : nlohmann::ordered_json();
    j["started"] = r.started;
    if (!r.error.empty()) j["error"] = r.error;
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (const std::string& k : keys) {
      auto it = r.config.find(k);
      c[k] = it == r.config.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(it->second);
    }
    j["config"] = c;
    nlohmann::ordered_json results = nlohmann::ordered_json::object();
    for (const auto& [k, v] : r.results)
      results[k] = std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
    j["results"] = results;
    out.push_back(j);
  }
  return out.dump(2) + "\n";
}

}  // namespace ember::train

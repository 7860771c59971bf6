// Multirun: expand `key=a,b` sweeps into a grid of jobs and train each in
// its own run directory (see multirun.h).
#include "ember/train/multirun.h"

#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "ember/train/run_status.h"
#include "text_table.h"

namespace ember::train {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// "a,[1,2],'x,y'" -> a | [1,2] | 'x,y': commas inside brackets or quotes
// belong to the value.
std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == ')' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  items.push_back(trim(cur));
  return items;
}

std::string local_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// "model=cnn,optim.lr=1e-3": Hydra's override_dirname, safe as a file name.
std::string job_dirname(size_t index, const std::vector<SweepAxis>& axes, const std::vector<std::string>& values) {
  std::string name = fmt::format("{:02}", index);
  for (size_t a = 0; a < axes.size(); ++a) name += (a == 0 ? "-" : ",") + axes[a].key + "=" + values[a];
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '=' || c == ',' || c == '+' ||
          c == '-'))
      c = '_';
  return name.substr(0, 120);
}

std::string describe(const std::vector<SweepAxis>& axes, const std::vector<std::string>& values) {
  std::vector<std::string> parts;
  for (size_t a = 0; a < axes.size(); ++a) parts.push_back(axes[a].key + "=" + values[a]);
  return parts.empty() ? std::string("(no swept keys)") : fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace

bool MultirunResult::all_finished() const {
  for (const MultirunJob& j : jobs)
    if (j.status != "finished") return false;
  return true;
}

Sweep expand_sweep(const std::vector<std::string>& overrides) {
  Sweep sweep;
  // Per override: its axis index, or -1 when fixed.
  std::vector<int> axis_of;
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    std::vector<std::string> items = eq == std::string::npos ? std::vector<std::string>{}
                                                              : split_top_level(std::string_view(o).substr(eq + 1));
    if (items.size() < 2) {
      axis_of.push_back(-1);
      continue;
    }
    const std::string key = trim(std::string_view(o).substr(0, eq));
    for (const std::string& item : items)
      if (item.empty())
        throw ConfigError(fmt::format("multirun: '{}' has an empty value; separate the values of {} with single "
                                      "commas", o, key));
    for (const SweepAxis& a : sweep.axes)
      if (a.key == key)
        throw ConfigError(fmt::format("multirun: '{}' is swept twice; list all its values in one override", key));
    axis_of.push_back(static_cast<int>(sweep.axes.size()));
    sweep.axes.push_back({key, items});
  }
  // Mixed-radix counting, the last axis fastest.
  size_t total = 1;
  for (const SweepAxis& a : sweep.axes) total *= a.values.size();
  for (size_t n = 0; n < total; ++n) {
    std::vector<size_t> digit(sweep.axes.size());
    size_t rest = n;
    for (size_t a = sweep.axes.size(); a-- > 0;) {
      digit[a] = rest % sweep.axes[a].values.size();
      rest /= sweep.axes[a].values.size();
    }
    std::vector<std::string> job, values;
    for (size_t i = 0; i < overrides.size(); ++i) {
      if (axis_of[i] < 0) {
        job.push_back(overrides[i]);
      } else {
        const SweepAxis& a = sweep.axes[static_cast<size_t>(axis_of[i])];
        job.push_back(a.key + "=" + a.values[digit[static_cast<size_t>(axis_of[i])]]);
      }
    }
    for (size_t a = 0; a < sweep.axes.size(); ++a) values.push_back(sweep.axes[a].values[digit[a]]);
    sweep.jobs.push_back(std::move(job));
    sweep.values.push_back(std::move(values));
  }
  return sweep;
}

MultirunResult multirun(const std::string& config_path, const std::vector<std::string>& overrides,
                        const TrainOptions& options) {
  const Sweep sweep = expand_sweep(overrides);
  // Every job's config is checked before the first one trains.
  std::vector<Config> configs;
  for (size_t i = 0; i < sweep.jobs.size(); ++i) {
    try {
      configs.push_back(load_config(config_path, sweep.jobs[i]));
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("multirun job {} of {} ({}): {}", i + 1, sweep.jobs.size(),
                                    describe(sweep.axes, sweep.values[i]), e.what()));
    }
  }
  std::ostream& out = options.out ? *options.out : std::cout;
  MultirunResult result;
  result.axes = sweep.axes;
  std::string name = configs.front().get_string("log.name");
  if (name.empty()) name = fs::path(config_path).stem().string();
  const std::string base =
      (fs::path(configs.front().get_string("log.root")) / (name + "-" + local_timestamp() + "-multirun")).string();
  result.sweep_dir = base;
  for (int i = 2; fs::exists(result.sweep_dir); ++i) result.sweep_dir = fmt::format("{}-{}", base, i);
  std::error_code ec;
  fs::create_directories(result.sweep_dir, ec);
  if (ec) throw RunError(fmt::format("multirun: cannot create '{}': {}", result.sweep_dir, ec.message()));

  for (size_t i = 0; i < sweep.jobs.size(); ++i) {
    MultirunJob job;
    job.values = sweep.values[i];
    job.run_dir = (fs::path(result.sweep_dir) / job_dirname(i, sweep.axes, job.values)).string();
    job.best = NAN;
    if (result.interrupt_signal) {
      job.status = "not run";
      result.jobs.push_back(job);
      continue;
    }
    out << fmt::format("[multirun {}/{}] {}\n", i + 1, sweep.jobs.size(), describe(sweep.axes, job.values));
    out.flush();
    TrainOptions o = options;
    o.run_dir = job.run_dir;
    try {
      TrainResult r = Trainer(configs[i], o).fit();
      job.status = r.finished ? "finished" : "interrupted";
      if (r.interrupt_signal) result.interrupt_signal = r.interrupt_signal;
    } catch (const std::exception& e) {
      job.status = "failed";
      job.error = e.what();
      out << fmt::format("ember: run failed: {}\n", e.what());
      out.flush();
    }
    if (auto st = read_run_status(job.run_dir)) {
      job.monitor = st->monitor;
      job.best = st->best;
    }
    result.jobs.push_back(job);
  }
  return result;
}

std::string multirun_table(const MultirunResult& r) {
  std::string monitor;
  bool one_monitor = true;
  for (const MultirunJob& j : r.jobs) {
    if (j.monitor.empty()) continue;
    if (monitor.empty()) monitor = j.monitor;
    else if (j.monitor != monitor) one_monitor = false;
  }
  std::vector<std::string> header = {"run"};
  std::vector<bool> right = {false};
  for (const SweepAxis& a : r.axes) header.push_back(a.key), right.push_back(false);
  header.push_back(one_monitor && !monitor.empty() ? "best " + monitor : "best");
  right.push_back(one_monitor);
  header.push_back("status");
  std::vector<std::vector<std::string>> rows;
  for (const MultirunJob& j : r.jobs) {
    std::vector<std::string> row = {fs::path(j.run_dir).filename().string()};
    for (const std::string& v : j.values) row.push_back(v);
    std::string best = std::isfinite(j.best) ? fmt::format("{:.4f}", j.best) : "-";
    if (!one_monitor && std::isfinite(j.best)) best = j.monitor + " " + best;
    row.push_back(best);
    std::string status = j.status;
    if (!j.error.empty()) {
      std::string first_line = j.error.substr(0, j.error.find('\n'));
      status += ": " + (first_line.size() > 70 ? first_line.substr(0, 67) + "..." : first_line);
    }
    row.push_back(status);
    rows.push_back(std::move(row));
  }
  size_t done = 0;
  for (const MultirunJob& j : r.jobs) done += j.status == "finished";
  return fmt::format("multirun: {} of {} runs finished in {}\n", done, r.jobs.size(), r.sweep_dir) +
         text_table(header, rows, right);
}

}  // namespace ember::train

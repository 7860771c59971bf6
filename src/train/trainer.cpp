// The training loop and everything around it: run directory, logging,
// checkpoints, resume, early stopping, evaluation, the report.
#include "ember/train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "environment.h"
#include "init_from.h"
#include "ember/autograd/autograd.h"
#include "ember/core/autocast.h"
#include "ember/core/generator.h"
#include "ember/core/grad_mode.h"
#include "ember/core/adaptive_threads.h"
#include "ember/core/parallel.h"
#include "ember/distributed/data_parallel.h"
#include "ember/distributed/sync_batch_norm.h"
#include "ember/ember.h"
#include "ember/io/atomic_file.h"
#include "ember/nn/loss.h"
#include "ember/optim/clip_grad.h"
#include "ember/train/callbacks.h"
#include "ember/train/checkpoint.h"
#include "ember/train/data_setup.h"
#include "ember/train/interrupt.h"
#include "ember/train/metrics.h"
#include "ember/train/optim_setup.h"
#include "ember/train/report.h"
#include "ember/train/run_status.h"
#include "ember/train/runs.h"
#include "ember/train/zoo.h"
#include "progress.h"

namespace ember::train {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Peak resident set size of the process, in MiB (VmHWM).
double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0.0;
}

// Now, as local time for run directory names or as UTC (ISO 8601) for the history.
enum class Clockface { local_compact, utc_iso };
std::string timestamp(Clockface face = Clockface::local_compact) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (face == Clockface::utc_iso) gmtime_r(&t, &tm);
  else localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), face == Clockface::utc_iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// history.yaml: one entry per command that ran the run, oldest first.
std::string history_yaml(const nlohmann::json& history) {
  YAML::Emitter y;
  y << YAML::BeginSeq;
  for (const nlohmann::json& e : history) {
    y << YAML::BeginMap;
    y << YAML::Key << "time" << YAML::Value << e.value("time", "");
    y << YAML::Key << "command" << YAML::Value << e.value("command", "");
    y << YAML::Key << "after_epoch" << YAML::Value << e.value("after_epoch", int64_t{0});
    y << YAML::Key << "changes" << YAML::Value << YAML::BeginMap;
    if (e.contains("changes") && e["changes"].is_object())
      for (auto it = e["changes"].begin(); it != e["changes"].end(); ++it)
        if (it.value().is_array() && it.value().size() == 2)
          y << YAML::Key << it.key() << YAML::Value << YAML::Flow << YAML::BeginSeq
            << it.value()[0].get<std::string>() << it.value()[1].get<std::string>() << YAML::EndSeq;
    y << YAML::EndMap;
    y << YAML::Key << "reset" << YAML::Value << YAML::Flow
      << (e.contains("reset") && e["reset"].is_array() ? e["reset"].get<std::vector<std::string>>()
                                                        : std::vector<std::string>{});
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  return std::string(y.c_str()) + "\n";
}

// Writes every line to the terminal and to train.log. On a terminal a line
// wraps at its field boundaries to the terminal's width; train.log and
// redirected output keep one line per entry.
class RunLog {
 public:
  RunLog(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}
  void open(const std::string& path) { file_.open(path, std::ios::app); }
  void line(const std::string& text) {
    out_ << (terminal_ ? wrap_fields(text, width()) : text) << '\n' << std::flush;
    if (file_.is_open()) file_ << text << '\n' << std::flush;
  }
  void redraw(const std::string& text) { out_ << text << std::flush; }
  bool terminal() const { return terminal_; }
  // Columns the progress line and the epoch summary fit in (80 off a terminal).
  int width() const { return terminal_ ? terminal_width(STDOUT_FILENO) : 80; }

 private:
  std::ostream& out_;
  bool terminal_;
  std::ofstream file_;
};

int64_t count_parameters(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& p : m.parameters()) n += p.numel();
  return n;
}

struct EvalStats {
  double loss = 0, accuracy = 0;
  std::vector<std::pair<std::string, double>> metrics;  // unprefixed names
  std::vector<std::pair<std::string, double>> per_class;  // "precision[Coat]", ...
  std::vector<std::vector<int64_t>> confusion;
};

int64_t top_k_of(const Config& c, const DataInfo& info) {
  int64_t k = c.get_int("train.top_k");
  return info.task == Task::Classification && k > 1 && k < info.num_classes ? k : 0;
}

Tensor compute_loss(const Config& c, const DataInfo& info, const Tensor& output, const Tensor& target) {
  if (info.task == Task::Regression) return nn::functional::mse_loss(output, target);
  nn::CrossEntropyOptions o;
  o.label_smoothing = c.get_float("train.label_smoothing");
  return nn::functional::cross_entropy(output, target, o);
}

// The names evaluate_loader reports, in order (metrics.csv's val_* columns).
std::vector<std::string> eval_metric_names(Task task, int64_t k) {
  if (task == Task::Regression) return {"loss", "mse", "mae"};
  std::vector<std::string> names = {"loss", "acc", "precision", "recall", "f1"};
  if (k) names.push_back(fmt::format("top{}_acc", k));
  names.insert(names.end(), {"precision_weighted", "recall_weighted", "f1_weighted"});
  return names;
}

std::vector<std::pair<std::string, double>> named(const std::vector<std::string>& names,
                                                  const std::vector<double>& values) {
  EMBER_ASSERT(names.size() == values.size(), "{} metric names for {} values", names.size(), values.size());
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], values[i]);
  return out;
}

// The columns of one epoch's row (metrics.csv), in train_one_epoch's order:
// the metrics a monitor may name.
std::vector<std::string> epoch_metric_names(const Config& c, const DataInfo& info, bool has_val) {
  std::vector<std::string> names = {"epoch", "train_loss", info.task == Task::Regression ? "train_mse" : "train_acc",
                                    "lr"};
  if (has_val)
    for (const std::string& n : eval_metric_names(info.task, top_k_of(c, info))) names.push_back("val_" + n);
  if (c.get_bool("log.timing")) names.insert(names.end(), {"epoch_time_s", "images_per_s", "data_wait_pct", "peak_rss_mib"});
  return names;
}

// A monitor that names no logged metric fails before the first epoch.
void check_monitor(const std::string& key, const std::string& given, const std::string& resolved,
                   const std::vector<std::string>& logged) {
  if (std::find(logged.begin(), logged.end(), resolved) != logged.end()) return;
  std::string why = given == resolved ? "" : fmt::format(" (read as '{}': there is no validation split)", resolved);
  throw ConfigError(fmt::format("{}: metric '{}'{} is not logged; choose one of {}", key, given, why,
                                fmt::join(logged, ", ")));
}

// `progress`, when given, has been started for this phase (val or test).
EvalStats evaluate_loader(const Config& c, const DataInfo& info, nn::Module& model, data::DataLoader& loader,
                          Progress* progress = nullptr) {
  model.eval();
  NoGradGuard no_grad;
  AutocastGuard autocast(c.get_string("train.mixed_precision") == "bf16");
  auto accumulate = [&](auto& metrics) {
    const Clock::time_point t0 = Clock::now();
    int64_t i = 0, images = 0;
    for (data::Sample& batch : loader) {
      Tensor out = model_forward(model, batch[0]);
      Tensor target = batch[1].tensor();
      metrics.update(out, target, compute_loss(c, info, out, target).item<double>());
      images += target.size(0);
      if (progress) progress->update(++i, metrics.loss(), static_cast<double>(images) / seconds_since(t0));
    }
    if (progress) progress->finish();
  };
  EvalStats s;
  if (info.task == Task::Regression) {
    RegressionMetrics m;
    accumulate(m);
    s.loss = m.loss();
    s.metrics = named(eval_metric_names(info.task, 0), {m.loss(), m.mse(), m.mae()});
    return s;
  }
  int64_t k = top_k_of(c, info);
  ClassificationMetrics m(info.num_classes, k ? std::vector<int64_t>{k} : std::vector<int64_t>{});
  accumulate(m);
  s.loss = m.loss();
  s.accuracy = m.accuracy();
  std::vector<double> values = {m.loss(), m.accuracy(), m.precision_macro(), m.recall_macro(), m.f1_macro()};
  if (k) values.push_back(m.top_k_accuracy(k));
  values.insert(values.end(), {m.precision_weighted(), m.recall_weighted(), m.f1_weighted()});
  s.metrics = named(eval_metric_names(info.task, k), values);
  s.confusion = m.confusion();
  const auto p = m.precision_per_class(), r = m.recall_per_class(), f = m.f1_per_class();
  for (size_t i = 0; i < p.size(); ++i) {
    std::string name = i < info.class_names.size() ? info.class_names[i] : std::to_string(i);
    s.per_class.emplace_back(fmt::format("precision[{}]", name), p[i]);
    s.per_class.emplace_back(fmt::format("recall[{}]", name), r[i]);
    s.per_class.emplace_back(fmt::format("f1[{}]", name), f[i]);
  }
  return s;
}

// Rank 0's string on every rank (the run directory's name).
std::string broadcast_string(distributed::ProcessGroup& group, const std::string& text) {
  Tensor n = full({1}, static_cast<int64_t>(text.size()), kInt64);
  group.broadcast(n, 0);
  Tensor bytes = zeros({n.item<int64_t>()}, kUInt8);
  if (group.rank() == 0 && !text.empty()) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  group.broadcast(bytes, 0);
  return std::string(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(bytes.numel()));
}

// Sums of per-rank values (float64) over the ranks.
std::vector<double> sum_over_ranks(distributed::ProcessGroup& group, const std::vector<double>& values) {
  if (group.size() == 1) return values;
  Tensor t = zeros({static_cast<int64_t>(values.size())}, kFloat64);
  std::copy(values.begin(), values.end(), t.data_ptr<double>());
  group.all_reduce(t, distributed::ReduceOp::Sum);
  return t.to_vector<double>();
}

}  // namespace

struct Trainer::State {
  Config config;
  TrainOptions options;
  std::unique_ptr<Checkpoint> resume_from;
  ResumePlan resume_plan;
  // Every command that ran this run: time, command, after_epoch, changes,
  // reset (Note [resume overrides]); kept in the checkpoint, written to
  // history.yaml and the report.
  nlohmann::json history = nlohmann::json::array();
  std::string run_dir;

  std::unique_ptr<RunLog> log;
  DataBundle data;
  std::unique_ptr<data::DataLoader> train_loader, val_loader, test_loader;
  nn::ModulePtr model;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<Schedule> schedule;
  std::string monitor;  // checkpoint metric (resolved)
  MetricTracker best;
  std::unique_ptr<EarlyStopping> early;
  MetricsTable table;
  int64_t epoch = 0;  // completed
  int64_t step = 0;
  // Data parallel (world 1: none of it).
  distributed::ProcessGroupPtr group;
  int64_t rank = 0, world = 1;
  std::shared_ptr<nn::DistributedDataParallel> ddp;
  std::ostream null_out{nullptr};  // terminal of ranks other than 0
  bool finished = false, stopped_early = false;
  // The epoch an interrupt stopped mid-way (Note [interrupts]): the batches
  // done and the running totals, so the resume continues it exactly; empty
  // between epochs.
  nlohmann::json partial_epoch;
  Environment env;
  // status.json (run_status.h): when this process started, and the time
  // and start of the processes before it (a resumed run).
  Clock::time_point process_start = Clock::now();
  double seconds_before = 0;
  std::string started;
  bool status_open = false;  // setup finished: failures are the run's
  // steps.csv: a row every log.steps_every optimizer steps (rank 0), over
  // the batches since the previous row.
  std::ofstream steps_file;
  struct StepWindow {
    double loss_sum = 0;
    int64_t samples = 0, images = 0;
    Clock::time_point since = Clock::now();
    // Classification: the window's predictions, for its accuracy and macro F1.
    std::optional<ClassificationMetrics> metrics;
  } window;
  // A run resumed from a steps.csv without train_f1 (an older Ember) keeps
  // that file's columns.
  bool steps_f1 = true;
  void open_steps_csv();
  void start_step_window();

  // Rank 0 records `what` (running, finished, interrupted, failed).
  void save_status(const std::string& what, const std::string& error = "");

  void setup();
  // False when an interrupt stopped the epoch (partial_epoch holds it).
  bool train_one_epoch(MetricsTable::Row& row);
  std::string trainer_json() const;
  void load_trainer_json(const std::string& text);
  Checkpoint make_checkpoint() const;
  void write_run_files(const std::vector<std::pair<std::string, double>>& final_metrics = {},
                       const std::vector<std::vector<int64_t>>& confusion = {},
                       bool report = true);  // false: metrics.csv and history.yaml only (log.report_every)
  std::vector<std::pair<std::string, double>> final_test();
  std::vector<std::pair<std::string, std::string>> report_header() const;
  void record_command();
  std::vector<std::pair<std::string, std::string>> history_rows() const;
  std::vector<std::pair<std::string, std::string>> settings_by_epoch() const;
};

void Trainer::State::save_status(const std::string& what, const std::string& error) {
  if (rank != 0 || run_dir.empty()) return;
  RunStatus st;
  st.status = what;
  st.pid = static_cast<int64_t>(::getpid());
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) st.host = host;
  st.started = started;
  st.updated = timestamp(Clockface::utc_iso);
  st.epoch = epoch;
  st.epochs = config.get_int("train.epochs");
  st.monitor = monitor;
  st.best = best.has_best() ? best.best() : NAN;
  st.best_epoch = best.has_best() ? best.best_epoch() : 0;
  st.seconds = seconds_before + seconds_since(process_start);
  st.stopped_early = stopped_early;
  st.error = error;
  write_run_status(run_dir, st);
}

// Rows past the checkpoint (written after last.ckpt, before an interrupt or
// a kill) are dropped on resume, so the file continues where training does.
void Trainer::State::open_steps_csv() {
  const int64_t every = config.get_int("log.steps_every");
  if (rank != 0 || every <= 0) return;
  const fs::path path = fs::path(run_dir) / "steps.csv";
  const bool regression = data.info.task == Task::Regression;
  std::string kept;
  if (resume_from && fs::exists(path)) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (kept.empty()) {
        kept = line + "\n";  // the header
        continue;
      }
      if (!line.empty() && std::strtoll(line.c_str(), nullptr, 10) <= step) kept += line + "\n";
    }
    io::write_file_atomic(path.string(), kept, "steps.csv");
  }
  steps_file.open(path, std::ios::app);
  EMBER_CHECK(steps_file.good(), "cannot write '{}'", path.string());
  steps_f1 = !regression && (kept.empty() || kept.find(",train_f1,") != std::string::npos);
  if (kept.empty())
    steps_file << (regression ? "step,epoch,batch,train_loss,lr,images_per_s\n"
                              : "step,epoch,batch,train_loss,train_acc,train_f1,lr,images_per_s\n")
               << std::flush;
}

void Trainer::State::start_step_window() {
  window = StepWindow{};
  if (data.info.task != Task::Regression) window.metrics.emplace(std::max<int64_t>(data.info.num_classes, 1));
}

// This process's entry in the run's history.
void Trainer::State::record_command() {
  nlohmann::ordered_json e;
  e["time"] = timestamp(Clockface::utc_iso);
  e["command"] = options.command_line.empty() ? "(C++ API)" : options.command_line;
  e["after_epoch"] = epoch;
  nlohmann::ordered_json changes = nlohmann::ordered_json::object();
  for (const ResumeChange& ch : resume_plan.changes) changes[ch.key] = {ch.before, ch.after};
  e["changes"] = changes;
  std::vector<std::string> reset;
  if (resume_plan.resets.optimizer) reset.push_back("optimizer");
  if (resume_plan.resets.schedule) reset.push_back("schedule");
  e["reset"] = reset;
  history.push_back(nlohmann::json::parse(e.dump()));
}

// (from epoch, what ran): the report's history table.
std::vector<std::pair<std::string, std::string>> Trainer::State::history_rows() const {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const nlohmann::json& e : history) {
    std::string what = e.value("command", "");
    if (e.contains("changes") && e["changes"].is_object())
      for (auto it = e["changes"].begin(); it != e["changes"].end(); ++it)
        if (it.value().is_array() && it.value().size() == 2)
          what += fmt::format("; {}: {} -> {}", it.key(), it.value()[0].get<std::string>(),
                              it.value()[1].get<std::string>());
    if (e.contains("reset") && e["reset"].is_array() && !e["reset"].empty())
      what += fmt::format("; reset {}", fmt::join(e["reset"].get<std::vector<std::string>>(), ", "));
    rows.emplace_back(fmt::format("epoch {} ({})", e.value("after_epoch", int64_t{0}) + 1, e.value("time", "")), what);
  }
  return rows;
}

// Each key a resume changed: its values and the epochs each ran for
// (train.epochs itself is the run's length, not a setting of an epoch).
std::vector<std::pair<std::string, std::string>> Trainer::State::settings_by_epoch() const {
  struct Span {
    std::string value;
    int64_t from;
  };
  std::map<std::string, std::vector<Span>> spans;
  for (const nlohmann::json& e : history) {
    if (!e.contains("changes") || !e["changes"].is_object()) continue;
    const int64_t from = e.value("after_epoch", int64_t{0}) + 1;
    for (auto it = e["changes"].begin(); it != e["changes"].end(); ++it) {
      if (it.key() == "train.epochs" || !it.value().is_array() || it.value().size() != 2) continue;
      std::vector<Span>& s = spans[it.key()];
      if (s.empty()) s.push_back({it.value()[0].get<std::string>(), 1});
      s.push_back({it.value()[1].get<std::string>(), from});
    }
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& [key, s] : spans) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < s.size(); ++i)
      parts.push_back(i + 1 < s.size() ? fmt::format("{} (epochs {}-{})", s[i].value, s[i].from, s[i + 1].from - 1)
                                       : fmt::format("{} (from epoch {})", s[i].value, s[i].from));
    rows.emplace_back(key, fmt::format("{}", fmt::join(parts, "; ")));
  }
  return rows;
}

Trainer::Trainer(Config config, TrainOptions options) : s_(std::make_unique<State>()) {
  s_->config = std::move(config);
  s_->options = std::move(options);
}

Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;

Trainer Trainer::resume(const std::string& run_dir, TrainOptions options, const std::vector<std::string>& overrides) {
  std::string ckpt_path = (fs::path(run_dir) / "last.ckpt").string();
  if (!fs::is_directory(run_dir)) throw ConfigError(fmt::format("--resume: '{}' is not a run directory", run_dir));
  if (!fs::exists(ckpt_path))
    throw ConfigError(fmt::format("--resume: '{}' has no last.ckpt (the run saved no checkpoint yet)", run_dir));
  auto ckpt = std::make_unique<Checkpoint>(load_checkpoint(ckpt_path));
  const Config before = config_from_yaml(ckpt->config_yaml, ckpt_path + " (config)");
  Config config = before;
  for (const std::string& o : overrides) config.apply_override(o);
  ResumedRun run;
  run.epochs_done = ckpt->epoch;
  const nlohmann::json j = nlohmann::json::parse(ckpt->trainer_json, nullptr, false);
  // (Malformed fields fail later, in setup, naming the file and field.)
  if (j.is_object()) {
    run.finished = j.contains("finished") && j["finished"].is_boolean() && j["finished"].get<bool>();
    run.stopped_early = j.contains("stopped_early") && j["stopped_early"].is_boolean() && j["stopped_early"].get<bool>();
  }
  ResumePlan plan = plan_resume(before, config, run, options.resets);
  options.run_dir = run_dir;
  Trainer t(std::move(config), std::move(options));
  t.s_->resume_from = std::move(ckpt);
  t.s_->resume_plan = std::move(plan);
  return t;
}

std::string Trainer::State::trainer_json() const {
  nlohmann::json j;
  j["best"] = nlohmann::json::parse(best.state_json());
  if (early) j["early_stopping"] = nlohmann::json::parse(early->state_json());
  j["finished"] = finished;
  j["stopped_early"] = stopped_early;
  j["history"] = history;
  if (!partial_epoch.is_null()) j["partial_epoch"] = partial_epoch;
  j["world_size"] = world;
  return j.dump();
}

void Trainer::State::load_trainer_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EMBER_CHECK(!j.is_discarded() && j.is_object() && j.contains("best"),
              "metadata 'trainer' is not a JSON object with a 'best' entry");
  best.load_state_json(j["best"].dump());
  if (early && j.contains("early_stopping")) early->load_state_json(j["early_stopping"].dump());
  for (const char* k : {"finished", "stopped_early"})
    EMBER_CHECK(!j.contains(k) || j[k].is_boolean(), "metadata 'trainer': field '{}' = {} is not true or false", k,
                j[k].dump());
  finished = j.value("finished", false);
  stopped_early = j.value("stopped_early", false);
  if (j.contains("partial_epoch")) {
    EMBER_CHECK(j["partial_epoch"].is_object() && j["partial_epoch"].contains("batch") &&
                    j["partial_epoch"]["batch"].is_number_integer() && j["partial_epoch"]["batch"].get<int64_t>() > 0,
                "metadata 'trainer': 'partial_epoch' is not an object with a positive 'batch'");
    partial_epoch = j["partial_epoch"];
  }
  if (j.contains("history")) {
    EMBER_CHECK(j["history"].is_array(), "metadata 'trainer': 'history' is not a list");
    history = j["history"];
  }
  // The sampler's shards, the per-rank batch and the step count depend on
  // the world size: an exact resume needs the same one.
  const int64_t saved_world = j.contains("world_size") && j["world_size"].is_number_integer()
                                  ? j["world_size"].get<int64_t>()
                                  : 1;
  if (saved_world != world)
    throw ConfigError(fmt::format(
        "--resume: the run was trained on {} rank{} but this job has {}; resume it with the same world size "
        "({}), since the data shards, the per-rank batches and the step count depend on it",
        saved_world, saved_world == 1 ? "" : "s", world,
        saved_world == 1 ? "a single process"
                         : fmt::format("mpirun -np {0} or srun -n {0} ... dist.enabled=true", saved_world)));
}

Checkpoint Trainer::State::make_checkpoint() const {
  Checkpoint c;
  c.model = model->state_dict();
  c.optimizer = optimizer->state_dict();
  c.scheduler = schedule->state_dict();
  c.rng_state = default_generator().get_state();
  c.epoch = epoch;
  c.step = step;
  c.config_yaml = config.to_yaml();
  c.metrics_csv = table.to_csv();
  c.trainer_json = trainer_json();
  return c;
}

void Trainer::State::setup() {
  const Config& c = config;
  group = options.group ? options.group : distributed::local_process_group();
  rank = group->rank();
  world = group->size();
  if (world > 1 && !c.get_bool("dist.enabled"))
    throw ConfigError(fmt::format("this process is rank {} of {} (started by an MPI launcher) but dist.enabled is "
                                  "false: add dist.enabled=true to train data-parallel (or run one process)",
                                  rank, world));
  std::ostream* out = rank != 0 ? &null_out : options.out ? options.out : &std::cout;
  bool tty = out == &std::cout && ::isatty(STDOUT_FILENO);
  log = std::make_unique<RunLog>(*out, tty);

  // Validate what can be validated before anything is written.
  int64_t threads = c.get_int("train.threads");
  if (threads > 0) {
    set_num_threads(static_cast<int>(threads));
  } else if (c.get_bool("train.deterministic")) {
    // A count that stays the same, so the same seed repeats bitwise (float sums can depend on the thread count);
    // OpenMP's own default would ignore a container's CPU quota.
    set_num_threads(default_num_threads());
  }  // else the default count adapts to other processes' load (Note [adaptive thread count])
  EMBER_CHECK(c.get_int("train.epochs") >= 1, "train.epochs must be at least 1, got {}", c.get_int("train.epochs"));
  EMBER_CHECK(c.get_int("train.grad_accum_steps") >= 1, "train.grad_accum_steps must be at least 1, got {}",
              c.get_int("train.grad_accum_steps"));
  const auto seed = static_cast<uint64_t>(c.get_int("train.seed"));
  manual_seed(seed);

  data = build_data(c);
  train_loader = make_loader(c, data.train, true, rank, world);
  if (data.val) val_loader = make_loader(c, data.val, false);
  test_loader = make_loader(c, data.test, false);
  model = build_model(c, data.info);
  // A resumed run continues from its checkpoint, not from the initial weights.
  if (!resume_from) load_initial_weights(*model, c.get_string("model.init_from"));
  if (world > 1) {
    if (c.get_bool("dist.sync_batchnorm")) model = nn::convert_sync_batchnorm(model, group);
    nn::DistributedDataParallelOptions o;
    o.find_unused_parameters = c.get_bool("dist.find_unused_parameters");
    o.bucket_cap_mb = c.get_float("dist.bucket_cap_mb");
    // Checkpoints keep the wrapped model's state_dict: no "module." prefix.
    ddp = std::make_shared<nn::DistributedDataParallel>(model, group, o);
  }
  optimizer = make_optimizer(c, *model);

  // The checkpoint metric; without validation data, val_* falls back to train_*.
  monitor = c.get_string("train.checkpoint.monitor");
  if (!val_loader && monitor.rfind("val_", 0) == 0) monitor = "train_" + monitor.substr(4);
  best = MetricTracker(resolve_mode(c.get_string("train.checkpoint.mode"), monitor));
  int64_t accum = c.get_int("train.grad_accum_steps");
  int64_t steps_per_epoch = (train_loader->size() + accum - 1) / accum;
  schedule = std::make_unique<Schedule>(c, *optimizer, steps_per_epoch, best.mode() == MetricMode::Max);
  const std::vector<std::string> logged = epoch_metric_names(c, data.info, val_loader != nullptr);
  check_monitor("train.checkpoint.monitor", c.get_string("train.checkpoint.monitor"), monitor, logged);
  std::string es = c.get_string("train.early_stopping.monitor");
  if (!es.empty()) {
    if (!val_loader && es.rfind("val_", 0) == 0) es = "train_" + es.substr(4);
    check_monitor("train.early_stopping.monitor", c.get_string("train.early_stopping.monitor"), es, logged);
    early = std::make_unique<EarlyStopping>(es, resolve_mode(c.get_string("train.early_stopping.mode"), es),
                                            c.get_int("train.early_stopping.patience"),
                                            c.get_float("train.early_stopping.min_delta"));
  }

  if (resume_from) {
    const Checkpoint& r = *resume_from;
    auto result = model->load_state_dict(r.model, true);
    (void)result;
    // The state fields come from the file: their errors name it.
    const std::string ckpt_path = (fs::path(options.run_dir) / "last.ckpt").string();
    try {
      if (!resume_plan.resets.optimizer) optimizer->load_state_dict(r.optimizer);
      if (!resume_plan.resets.schedule) {
        schedule->load_state_dict(r.scheduler);
      } else if (!resume_plan.resets.optimizer) {
        // The optimizer's state holds the old schedule's last lr (0 at a
        // cosine's end): the fresh schedule starts from optim.lr, as planned.
        for (optim::ParamGroup& g : optimizer->param_groups()) {
          g.set_lr(c.get_float("optim.lr"));
          g.options.erase("initial_lr");
        }
        schedule = std::make_unique<Schedule>(c, *optimizer, steps_per_epoch, best.mode() == MetricMode::Max);
      }
      if (r.rng_state.defined()) default_generator().set_state(r.rng_state);
      table = MetricsTable::from_csv(r.metrics_csv, ckpt_path + " (metadata 'metrics_csv')");
      load_trainer_json(r.trainer_json);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      EMBER_ERROR("checkpoint '{}': {}", ckpt_path, e.what());
    }
    epoch = r.epoch;
    step = r.step;
    run_dir = options.run_dir;
    if (resume_plan.continues_finished_run) finished = stopped_early = false;
    // The settings in force from here on are the run's config.
    if (!resume_plan.changes.empty() && rank == 0)
      io::write_file_atomic((fs::path(run_dir) / "config.yaml").string(), c.to_yaml(true), "config.yaml");
    // A kill during a checkpoint write leaves "<name>.tmp.<pid>.<hex>" behind.
    if (rank == 0) io::remove_stale_temp_files(run_dir);
  } else if (rank != 0) {
    run_dir = broadcast_string(*group, "");  // rank 0 names (and creates) it
  } else {
    std::string name = c.get_string("log.name");
    if (name.empty()) name = c.get_string("model.name");
    run_dir = options.run_dir;
    if (run_dir.empty()) {
      std::string base = (fs::path(c.get_string("log.root")) / (name + "-" + timestamp())).string();
      run_dir = base;
      for (int i = 2; fs::exists(run_dir); ++i) run_dir = fmt::format("{}-{}", base, i);
    }
    std::error_code ec;
    fs::create_directories(run_dir, ec);
    EMBER_CHECK(!ec, "cannot create the run directory '{}': {}", run_dir, ec.message());
    io::write_file_atomic((fs::path(run_dir) / "config.yaml").string(), c.to_yaml(true), "config.yaml");
    if (world > 1) broadcast_string(*group, run_dir);
  }
  started = timestamp(Clockface::utc_iso);
  if (resume_from && rank == 0) {
    if (auto before = read_run_status(run_dir)) {
      seconds_before = before->seconds;
      if (!before->started.empty()) started = before->started;
    }
  }
  env = environment_info(c.get_int("train.seed"));
  if (rank == 0)
    io::write_file_atomic((fs::path(run_dir) / "env.json").string(), environment_json(env), "env.json");
  log->open((fs::path(run_dir) / (rank == 0 ? std::string("train.log") : fmt::format("rank-{}.log", rank))).string());
  record_command();
  if (resume_from) {
    log->line(fmt::format("resuming {} after epoch {} (step {})", run_dir, epoch, step));
    for (const ResumeChange& ch : resume_plan.changes)
      log->line(fmt::format("  {}: {} -> {} from the next step", ch.key, ch.before, ch.after));
    if (resume_plan.resets.optimizer) log->line("  --reset optimizer: a fresh optimizer and LR schedule");
    else if (resume_plan.resets.schedule) log->line("  --reset schedule: the LR schedule restarts");
    if (finished && resume_plan.changes.empty())
      log->line(fmt::format("the run finished after {} epochs; nothing to train (raise train.epochs to continue it)",
                            epoch));
  }
  log->line(fmt::format("ember {} | model {} ({} parameters) | {} train / {} val / {} test samples | {} threads{}",
                        version(), c.get_string("model.name"), count_parameters(*model), data.train->size(),
                        data.val ? data.val->size() : 0, data.test->size(), get_num_threads(),
                        adaptive_threads() ? " (adaptive: fewer while other processes hold CPUs)" : ""));
  log->line(fmt::format("run directory: {}", run_dir));
  if (schedule->warmup_steps_requested() > 0 && epoch == 0)
    log->line(fmt::format("warm-up: {} optimizer steps, not the {} asked for (capped to schedule.warmup_max_fraction "
                          "= {} of the run)", schedule->warmup_steps(), schedule->warmup_steps_requested(),
                          c.get_float("schedule.warmup_max_fraction")));
  if (world > 1)
    log->line(fmt::format("data parallel: rank {} of {} ({}) | data.batch_size {} per rank, global batch {} | {} "
                          "train samples per rank per epoch{}",
                          rank, world, group->backend(), c.get_int("data.batch_size"),
                          c.get_int("data.batch_size") * world, train_loader->options().sampler->size(),
                          c.get_bool("dist.sync_batchnorm") ? " | SyncBatchNorm" : ""));
  open_steps_csv();
  save_status("running");
  status_open = true;
}

bool Trainer::State::train_one_epoch(MetricsTable::Row& row) {
  const Config& c = config;
  const DataInfo& info = data.info;
  const int64_t accum = c.get_int("train.grad_accum_steps");
  const double clip = c.get_float("train.grad_clip_norm");
  const bool skip_nonfinite = c.get_string("train.nonfinite_loss") == "skip";
  const int64_t epochs = c.get_int("train.epochs");
  const bool bf16 = c.get_string("train.mixed_precision") == "bf16";
  std::vector<Tensor> params = model->parameters();

  Progress::Style style = Progress::Style::Plain;
  const std::string& p = c.get_string("log.progress");
  if (p == "none") style = Progress::Style::None;
  else if (p == "bar" || (p == "auto" && log->terminal())) style = Progress::Style::Bar;
  Progress progress(style, c.get_int("log.interval"), [this](const std::string& s) { log->redraw(s); },
                    [this](const std::string& s) { log->line(s); }, log->width());

  model->train();
  train_loader->set_epoch(epoch);  // order and augmentation depend on (seed, epoch) only
  int64_t k = top_k_of(c, info);
  ClassificationMetrics cm(std::max<int64_t>(info.num_classes, 1), k ? std::vector<int64_t>{k} : std::vector<int64_t>{});
  RegressionMetrics rm;
  const int64_t n_batches = train_loader->size();
  progress.start(epoch + 1, epochs, n_batches);
  start_step_window();  // steps.csv's rows cover training batches only

  Clock::time_point t0 = Clock::now();
  double wait = 0, time_before = 0;  // time_before: the interrupted part's
  int64_t images = 0, finite_images = 0, skipped = 0, first = 0;
  double loss_sum = 0;
  if (!partial_epoch.is_null()) {
    // The rest of an epoch an interrupt stopped (Note [interrupts]).
    const nlohmann::json& p = partial_epoch;
    const std::string where = fmt::format("last.ckpt: the interrupted epoch {}", epoch + 1);
    try {
      first = p.at("batch").get<int64_t>();
      images = p.at("images").get<int64_t>();
      finite_images = p.at("finite_images").get<int64_t>();
      skipped = p.at("skipped").get<int64_t>();
      loss_sum = p.at("loss_sum").get<double>();
      time_before = p.at("train_time").get<double>();
      wait = p.at("data_wait").get<double>();
      if (info.task == Task::Regression) rm.load_state_json(p.at("metrics").dump());
      else cm.load_state_json(p.at("metrics").dump());
    } catch (const nlohmann::json::exception& e) {
      EMBER_ERROR("{}: {}", where, e.what());
    }
    EMBER_CHECK(first < n_batches, "{}: {} batches done of {}", where, first, n_batches);
    partial_epoch = nlohmann::json();
  }
  Clock::time_point tw = Clock::now();
  auto it = train_loader->begin();
  // Batches depend on (seed, epoch, index) only: skipping reproduces the rest.
  for (int64_t i = 0; i < first && it != train_loader->end(); ++i) ++it;
  wait += seconds_since(tw);
  for (int64_t i = first; it != train_loader->end(); ++i) {
    const data::Sample& batch = *it;
    bool stepped = false;  // an optimizer step ran after this batch
    Tensor target = batch[1].tensor();
    Tensor output, loss;
    // Micro-batches before the optimizer step only accumulate locally.
    const bool sync_step = (i + 1) % accum == 0 || i + 1 == n_batches;
    std::optional<nn::DistributedDataParallel::NoSync> no_sync;
    if (ddp && !sync_step) no_sync.emplace(*ddp);
    {
      AutocastGuard autocast(bf16);  // matmul/conv in bf16; the loss and the weights stay float32
      if (ddp) ddp->prepare_forward();
      output = model_forward(*model, batch[0]);
      loss = compute_loss(c, info, output, target);
    }
    const double lv = loss.item<double>();
    const int64_t bs = target.size(0);
    // Every rank skips (or stops) together: a rank that ran backward alone
    // would wait for the others' gradients.
    const bool finite = world > 1 ? std::isfinite(sum_over_ranks(*group, {lv})[0]) : std::isfinite(lv);
    if (!finite) {
      if (!skip_nonfinite)
        throw RunError(fmt::format(
            "non-finite loss ({}{}) at epoch {}, batch {} of {} (optimizer step {}); lower optim.lr (now {}) or set "
            "train.grad_clip_norm, or set train.nonfinite_loss=skip to skip such steps",
            lv, std::isfinite(lv) ? " here, non-finite on another rank" : "", epoch + 1, i + 1, n_batches, step + 1, schedule->lr()));
      optimizer->zero_grad();
      ++skipped;
    } else {
      (accum > 1 ? loss / static_cast<double>(accum) : loss).backward();
      if (sync_step) {
        if (clip > 0) optim::clip_grad_norm_(params, clip);
        optimizer->step();
        optimizer->zero_grad();
        ++step;
        stepped = true;
        schedule->after_optimizer_step();
      }
      if (info.task == Task::Regression) rm.update(output.detach(), target, lv);
      else cm.update(output.detach(), target, lv);
      loss_sum += lv * static_cast<double>(bs);
      finite_images += bs;
      if (steps_file.is_open()) {
        window.loss_sum += lv * static_cast<double>(bs);
        window.samples += bs;
        if (window.metrics) window.metrics->update(output.detach(), target, lv);
      }
    }
    images += bs;
    window.images += bs;
    if (steps_file.is_open() && stepped && step % c.get_int("log.steps_every") == 0) {
      const double n = static_cast<double>(std::max<int64_t>(window.samples, 1));
      std::string row = fmt::format("{},{},{},{}", step, epoch + 1, i + 1,
                                    window.samples ? fmt::format("{}", window.loss_sum / n) : "nan");
      if (window.metrics) {
        row += fmt::format(",{}", window.metrics->accuracy());
        if (steps_f1) row += fmt::format(",{}", window.metrics->f1_macro());
      }
      row += fmt::format(",{},{}\n", schedule->lr(), static_cast<double>(window.images) / seconds_since(window.since));
      steps_file << row << std::flush;
      start_step_window();
    }
    // The running loss is over the steps that counted (NaN until one did).
    progress.update(i + 1, finite_images ? loss_sum / static_cast<double>(finite_images) : NAN,
                    static_cast<double>(images) / (time_before + seconds_since(t0)));
    if (options.on_batch_end) options.on_batch_end(epoch, i);
    // Stop at an optimizer-step boundary, unless the epoch is done anyway.
    const bool step_boundary = (i + 1) % accum == 0;
    if (world == 1 && options.handle_interrupts && InterruptGuard::requested() && step_boundary && i + 1 < n_batches) {
      progress.finish();
      partial_epoch = {{"batch", i + 1},
                       {"images", images},
                       {"finite_images", finite_images},
                       {"skipped", skipped},
                       {"loss_sum", loss_sum},
                       {"train_time", time_before + seconds_since(t0)},
                       {"data_wait", wait},
                       {"metrics", nlohmann::json::parse(info.task == Task::Regression ? rm.state_json()
                                                                                       : cm.state_json())}};
      return false;
    }
    tw = Clock::now();
    ++it;
    wait += seconds_since(tw);
  }
  progress.finish();
  const double train_time = time_before + seconds_since(t0);
  if (skipped) log->line(fmt::format("epoch {}: skipped {} steps with a non-finite loss", epoch + 1, skipped));
  // An epoch with no finite step has no training loss (0.0 would read as a
  // perfect fit) and did not train: fail the run, as a monitor of it would.
  if (n_batches > 0 && skipped == n_batches)
    throw RunError(fmt::format(
        "epoch {}: every one of the {} steps had a non-finite loss (train.nonfinite_loss=skip skipped them all), so "
        "nothing was trained and there is no training loss to report; check the data for NaN/Inf, lower optim.lr "
        "(now {}) or set train.grad_clip_norm", epoch + 1, n_batches, schedule->lr()));

  row.emplace_back("epoch", static_cast<double>(epoch + 1));
  // Train metrics over every rank's samples: sums weighted by sample counts.
  const double counted = static_cast<double>(finite_images);
  const bool regression = info.task == Task::Regression;
  const std::vector<double> totals =
      sum_over_ranks(*group, {counted > 0 ? (regression ? rm.loss() : cm.loss()) * counted : 0.0,
                              counted > 0 ? (regression ? rm.mse() : cm.accuracy()) * counted : 0.0, counted,
                              static_cast<double>(images)});
  const double all_counted = std::max(totals[2], 1.0);
  row.emplace_back("train_loss", totals[0] / all_counted);
  row.emplace_back(regression ? "train_mse" : "train_acc", totals[1] / all_counted);
  images = static_cast<int64_t>(totals[3]);
  row.emplace_back("lr", schedule->lr());
  Clock::time_point tv = Clock::now();
  if (val_loader) {
    progress.start(epoch + 1, epochs, val_loader->size(), "val");
    EvalStats v = evaluate_loader(c, info, *model, *val_loader, &progress);
    for (const auto& [name, value] : v.metrics) row.emplace_back("val_" + name, value);
  }
  if (const int64_t every = c.get_int("train.eval_test_every"); every > 0) {
    // Every row has the test_* columns (metrics.csv's columns are fixed): nan where not due.
    std::vector<std::pair<std::string, double>> values;
    for (const std::string& name : eval_metric_names(info.task, k)) values.emplace_back(name, NAN);
    if ((epoch + 1) % every == 0) {
      progress.start(epoch + 1, epochs, test_loader->size(), "test");
      values = evaluate_loader(c, info, *model, *test_loader, &progress).metrics;
    }
    for (const auto& [name, value] : values) row.emplace_back("test_" + name, value);
  }
  const double val_time = seconds_since(tv);
  if (c.get_bool("log.timing")) {
    row.emplace_back("epoch_time_s", train_time + val_time);
    row.emplace_back("images_per_s", static_cast<double>(images) / train_time);
    row.emplace_back("data_wait_pct", 100.0 * wait / train_time);
    row.emplace_back("peak_rss_mib", peak_rss_mib());
  }
  return true;
}

void Trainer::State::write_run_files(const std::vector<std::pair<std::string, double>>& final_metrics,
                                     const std::vector<std::vector<int64_t>>& confusion, bool report) {
  fs::path dir(run_dir);
  // metrics.csv and history.yaml every time: a resume continues from them.
  io::write_file_atomic((dir / "metrics.csv").string(), table.to_csv(), "metrics.csv");
  io::write_file_atomic((dir / "history.yaml").string(), history_yaml(history), "history.yaml");
  // confusion.json: the test confusion matrix for `ember board`.
  if (!confusion.empty())
    io::write_file_atomic((dir / "confusion.json").string(),
                          nlohmann::json{{"classes", data.info.class_names}, {"matrix", confusion}}.dump() + "\n",
                          "confusion.json");
  if (!report) return;
  io::write_file_atomic((dir / "curves.svg").string(), curves_svg(table), "curves.svg");
  ReportInput in;
  in.title = dir.filename().string();
  in.header = report_header();
  in.metrics = table;
  // steps.csv as written so far (flushed row by row); a report never fails over it.
  if (fs::exists(dir / "steps.csv")) try {
      in.steps = MetricsTable::from_csv(io::read_file((dir / "steps.csv").string()), "steps.csv");
    } catch (const Error&) {
    }
  in.final_metrics = final_metrics;
  in.confusion = confusion;
  in.class_names = data.info.class_names;
  in.config_yaml = config.to_yaml();
  in.history = history_rows();
  in.settings_by_epoch = settings_by_epoch();
  in.environment = env;
  io::write_file_atomic((dir / "report.html").string(), report_html(in), "report.html");
}

// report.html's header: start, duration, command line, data sizes, versions.
std::vector<std::pair<std::string, std::string>> Trainer::State::report_header() const {
  auto env_value = [&](const std::string& key) {
    for (const auto& [k, v] : env)
      if (k == key) return v;
    return std::string("?");
  };
  const std::string sizes =
      fmt::format("{} train, {} validation, {} test", data.train ? data.train->size() : 0,
                  data.val ? data.val->size() : 0, data.test ? data.test->size() : 0);
  return {{"started", started},
          {"duration", run_duration_text(seconds_before + seconds_since(process_start))},
          {"command line", options.command_line.empty() ? "(C++ API)" : options.command_line},
          {"data", sizes},
          {"versions", fmt::format("ember {} ({}), oneDNN {}, {}", env_value("ember_version"),
                                   env_value("git_commit"), env_value("onednn"), env_value("compiler"))}};
}

std::vector<std::pair<std::string, double>> Trainer::State::final_test() {
  // Test with the best model (best.ckpt), as the run reports it.
  std::string best_path = (fs::path(run_dir) / "best.ckpt").string();
  int64_t best_epoch = epoch;
  if (fs::exists(best_path)) {
    Checkpoint b = load_checkpoint(best_path);
    model->load_state_dict(b.model, true);
    best_epoch = b.epoch;
  }
  EvalStats t = evaluate_loader(config, data.info, *model, *test_loader);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, value] : t.metrics) out.emplace_back("test_" + name, value);
  out.emplace_back("best_epoch", static_cast<double>(best_epoch));
  for (const auto& [name, value] : t.per_class) out.emplace_back("test_" + name, value);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : out) j[name] = value;
  io::write_file_atomic((fs::path(run_dir) / "test_metrics.json").string(), j.dump(2) + "\n", "test_metrics.json");
  write_run_files(out, t.confusion);
  if (data.info.task == Task::Classification)
    log->line(fmt::format("test accuracy {:.2f}% (loss {:.4f}, macro F1 {:.4f}) with best.ckpt from epoch {} | run "
                          "directory: {}",
                          100.0 * t.accuracy, t.loss, t.metrics[4].second, best_epoch, run_dir));
  else
    log->line(fmt::format("test loss {:.6f} with best.ckpt from epoch {} | run directory: {}", t.loss, best_epoch,
                          run_dir));
  return out;
}

TrainResult Trainer::fit() {
  State& s = *s_;
  try {
    return fit_run();
  } catch (const std::exception& e) {
    // What went wrong stays with the run (`ember runs`, a multirun's table).
    if (s.status_open) s.save_status("failed", e.what());
    throw;
  }
}

TrainResult Trainer::fit_run() {
  State& s = *s_;
  // Installed before setup, so a signal while the data loads is honoured
  // at the first step rather than killing the process.
  std::optional<InterruptGuard> signals;
  if (s.options.handle_interrupts) signals.emplace();
  s.setup();
  // A world of one only: ranks would stop at different steps (mpirun
  // forwards the signal to each), and a collective would wait forever.
  if (s.world > 1) signals.reset();
  const Config& c = s.config;
  const int64_t epochs = c.get_int("train.epochs");
  // last.ckpt every N epochs; 0: only at the end, or when the run stops.
  const int64_t every = c.get_int("train.checkpoint.every");
  auto last_due = [every](int64_t epoch) { return every > 0 && epoch % every == 0; };
  const int64_t report_every = c.get_int("log.report_every");  // curves.svg, report.html
  const fs::path dir(s.run_dir);
  int64_t ran = 0;
  bool interrupted = false;
  auto stop_for_signal = [&] {
    interrupted = true;
    s.log->line(fmt::format("{} at epoch {}{}: last.ckpt saved; continue with: {} train --resume {}",
                            InterruptGuard::requested() == SIGTERM ? "terminated" : "interrupted",
                            s.epoch + (s.partial_epoch.is_null() ? 0 : 1),
                            s.partial_epoch.is_null()
                                ? " (its end)"
                                : fmt::format(", batch {} of {}", s.partial_epoch["batch"].get<int64_t>(),
                                              s.train_loader->size()),
                            s.options.program, s.run_dir));
  };
  while (!s.finished && s.epoch < epochs) {
    MetricsTable::Row row;
    if (!s.train_one_epoch(row)) {
      save_checkpoint(s.make_checkpoint(), (dir / "last.ckpt").string());
      stop_for_signal();
      break;
    }
    if (s.world > 1) {
      // Rank 0's row on every rank (timings differ per rank), so checkpoint,
      // schedule and early-stopping decisions agree everywhere.
      Tensor values = zeros({static_cast<int64_t>(row.size())}, kFloat64);
      for (size_t k = 0; k < row.size(); ++k) values.data_ptr<double>()[k] = row[k].second;
      s.group->broadcast(values, 0);
      for (size_t k = 0; k < row.size(); ++k) row[k].second = values.data_ptr<double>()[k];
    }
    auto value_of = [&](const std::string& name) {
      for (const auto& [k, v] : row)
        if (k == name) return v;
      std::vector<std::string> names;
      for (const auto& kv : row) names.push_back(kv.first);
      throw ConfigError(fmt::format("metric '{}' is not logged; choose one of {}", name, fmt::join(names, ", ")));
    };
    double monitored = value_of(s.monitor);
    s.schedule->after_epoch(monitored);
    ++s.epoch;
    bool improved = s.best.update(monitored, s.epoch);
    if (s.early && s.early->update(value_of(s.early->monitor()), s.epoch)) s.stopped_early = true;
    s.table.add_row(row);
    if (s.stopped_early || s.epoch == epochs) s.finished = true;

    std::string line = fmt::format("epoch {}/{}", s.epoch, epochs);
    for (const auto& [k, v] : row) {
      if (k == "epoch" || (std::isnan(v) && k.rfind("test_", 0) == 0)) continue;  // test split not due
      if (k == "lr") line += fmt::format("  lr {:.3g}", v);
      else if (k == "epoch_time_s") line += fmt::format("  {:.1f}s", v);
      else if (k == "images_per_s") line += fmt::format("  {:.0f} img/s", v);
      else if (k == "data_wait_pct") line += fmt::format("  data wait {:.1f}%", v);
      else if (k == "peak_rss_mib") line += fmt::format("  peak {:.0f} MiB", v);
      else if (k.find("acc") != std::string::npos || k.find("loss") != std::string::npos)
        line += fmt::format("  {} {:.4f}", k, v);
    }
    if (improved) line += "  *";
    s.log->line(line);

    if (s.rank == 0) {  // the other ranks hold the same weights
      if (improved) save_checkpoint(s.make_checkpoint(), (dir / "best.ckpt").string());
      if (last_due(s.epoch) || s.finished) save_checkpoint(s.make_checkpoint(), (dir / "last.ckpt").string());
      s.write_run_files({}, {}, s.epoch % report_every == 0 || s.finished);
      s.save_status("running");
    }
    if (s.stopped_early)
      s.log->line(fmt::format("early stopping: {} did not improve for {} epochs (best {:.6g} at epoch {})",
                              s.early->monitor(), s.early->patience(), s.early->tracker().best(),
                              s.early->tracker().best_epoch()));
    ++ran;
    if (signals && InterruptGuard::requested() && !s.finished) {
      if (!last_due(s.epoch)) save_checkpoint(s.make_checkpoint(), (dir / "last.ckpt").string());
      stop_for_signal();
      break;
    }
    if (!s.finished && s.options.stop_after_epochs > 0 && ran >= s.options.stop_after_epochs) {
      // The resume point is this epoch, whatever train.checkpoint.every says.
      if (s.rank == 0 && !last_due(s.epoch)) save_checkpoint(s.make_checkpoint(), (dir / "last.ckpt").string());
      interrupted = true;
      break;
    }
  }
  // A resume with nothing left to train still ran a command (it re-tests
  // and rewrites the report): last.ckpt keeps its history entry, which the
  // next resume reads, so history.yaml never loses one.
  if (ran == 0 && !interrupted && s.rank == 0 && s.resume_from)
    save_checkpoint(s.make_checkpoint(), (dir / "last.ckpt").string());
  TrainResult r;
  r.run_dir = s.run_dir;
  r.epochs_completed = s.epoch;
  r.stopped_early = s.stopped_early;
  r.finished = !interrupted;
  r.interrupt_signal = signals ? InterruptGuard::requested() : 0;
  // The test set is evaluated once, by rank 0, which writes the results.
  if (!interrupted && s.rank == 0) r.test_metrics = s.final_test();
  else if (interrupted && !r.interrupt_signal)
    s.log->line(fmt::format("stopped after epoch {}; continue with: {} train --resume {}", s.epoch,
                              s.options.program, s.run_dir));
  if (interrupted && s.rank == 0) s.write_run_files();  // a stopped run's report is current (log.report_every)
  s.save_status(interrupted ? "interrupted" : "finished");
  return r;
}

namespace {

data::DatasetPtr split_dataset(const DataBundle& data, const std::string& split, const std::string& who) {
  if (split != "test" && split != "val" && split != "train")
    throw ConfigError(fmt::format("eval: --split must be test, val or train, got '{}'", split));
  data::DatasetPtr ds = split == "test" ? data.test : split == "val" ? data.val : data.train;
  if (!ds) throw ConfigError(fmt::format("eval: {} has no {} split (data.val_fraction = 0)", who, split));
  return ds;
}

// Evaluates `model` on `ds`; the metrics are named "<split>_<metric>".
EvalResult evaluate_on(const Config& c, const DataBundle& data, nn::Module& model, const data::DatasetPtr& ds,
                       const std::string& split) {
  auto loader = make_loader(c, ds, false);
  EvalStats st = evaluate_loader(c, data.info, model, *loader);
  EvalResult r;
  r.split = split;
  for (const auto& [k, v] : st.metrics) r.metrics.emplace_back(split + "_" + k, v);
  for (const auto& [k, v] : st.per_class) r.metrics.emplace_back(split + "_" + k, v);
  r.confusion = st.confusion;
  return r;
}

// One metric a line, the values in one column however long the names
// ("test_precision[Ankle boot]").
void print_metrics(const EvalResult& r, std::ostream& out) {
  size_t width = 0;
  for (const auto& [k, v] : r.metrics) width = std::max(width, k.size());
  for (const auto& [k, v] : r.metrics) out << fmt::format("  {:<{}}  {:.6f}\n", k, width, v);
}

// eval_<split>.json for the run's best.ckpt, eval_<checkpoint>_<split>.json
// for any other checkpoint (last.ckpt: eval_last_test.json), so evaluating
// both keeps both results.
std::string eval_json_path(const fs::path& checkpoint, const std::string& split) {
  const std::string stem = checkpoint.stem().string();
  const std::string name = stem == "best" ? fmt::format("eval_{}.json", split) : fmt::format("eval_{}_{}.json", stem,
                                                                                               split);
  return (checkpoint.parent_path() / name).string();
}

void seed_and_threads(const Config& c) {
  if (c.get_int("train.threads") > 0) set_num_threads(static_cast<int>(c.get_int("train.threads")));
  manual_seed(static_cast<uint64_t>(c.get_int("train.seed")));
}

}  // namespace

EvalResult evaluate(const std::string& target, const std::string& split, std::ostream& out) {
  std::string path = fs::is_directory(target) ? (fs::path(target) / "best.ckpt").string() : target;
  if (!fs::exists(path))
    throw ConfigError(fmt::format("eval: '{}' does not exist{}", path,
                                  fs::is_directory(target) ? " (the run has no best checkpoint yet)" : ""));
  Checkpoint ckpt = load_checkpoint(path);
  Config c = config_from_yaml(ckpt.config_yaml, path + " (config)");
  seed_and_threads(c);
  DataBundle data = build_data(c);
  data::DatasetPtr ds = split_dataset(data, split, "the run");
  nn::ModulePtr model = build_model(c, data.info);
  model->load_state_dict(ckpt.model, true);
  EvalResult r = evaluate_on(c, data, *model, ds, split);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["checkpoint"] = path;
  j["epoch"] = ckpt.epoch;
  for (const auto& [k, v] : r.metrics) j[k] = v;
  std::string json_path = eval_json_path(path, split);
  io::write_file_atomic(json_path, j.dump(2) + "\n", "eval");
  out << fmt::format("{} (epoch {}) on {} ({} samples):\n", path, ckpt.epoch, split, ds->size());
  print_metrics(r, out);
  out << fmt::format("wrote {}\n", json_path);
  return r;
}

EvalResult evaluate_config(const std::string& config_path, const std::vector<std::string>& overrides,
                           const std::string& split, std::ostream& out) {
  Config c = load_config(config_path, overrides);
  const std::string weights = c.get_string("model.init_from");
  if (weights.empty())
    throw ConfigError(fmt::format("eval: {} names no weights: add model.init_from=WEIGHTS (.pt, .safetensors, "
                                  ".ckpt), or evaluate a run directory",
                                  config_path));
  seed_and_threads(c);
  DataBundle data = build_data(c);
  data::DatasetPtr ds = split_dataset(data, split, config_path);
  nn::ModulePtr model = build_model(c, data.info);
  load_initial_weights(*model, weights);
  EvalResult r = evaluate_on(c, data, *model, ds, split);
  out << fmt::format("{} ({}) on {} ({} samples):\n", weights, c.get_string("model.name"), split, ds->size());
  print_metrics(r, out);
  return r;
}

}  // namespace ember::train

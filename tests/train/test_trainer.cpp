// The training workflow end to end on a small slice of Fashion-MNIST:
// run directory contents, exact resume, early stopping, bad input.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/io/atomic_file.h"
#include "ember/io/safetensors.h"
#include "ember/train/callbacks.h"
#include "ember/train/checkpoint.h"
#include "ember/train/config.h"
#include "ember/train/report.h"
#include "ember/train/trainer.h"
#include "ember/train/zoo.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ember_trainer_" + name);
  fs::remove_all(p);
  return p.string();
}

std::string slurp(const fs::path& p) { return io::read_file(p.string()); }

// A small, fast experiment: 600 training images, a narrow CNN.
Config small_config(std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"model.name=cnn",      "model.channels=[4, 8]", "model.hidden=16",
                                "data.limit_train=600", "data.limit_test=200",  "data.val_fraction=0.2",
                                "data.batch_size=50",   "data.num_workers=2",   "data.augment=[hflip, random_crop]",
                                "train.epochs=3",       "train.threads=2",      "log.progress=none",
                                "train.checkpoint.monitor=val_acc"};
  // Another model has other options: keep only the shared ones.
  if (std::any_of(extra.begin(), extra.end(), [](const std::string& e) { return e.rfind("model.name=", 0) == 0; }))
    o.erase(std::remove_if(o.begin(), o.end(), [](const std::string& e) { return e.rfind("model.", 0) == 0; }),
            o.end());
  o.insert(o.end(), extra.begin(), extra.end());
  return load_config("", o);
}

TrainResult run(Config c, const std::string& dir, int64_t stop_after = 0) {
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  opt.run_dir = dir;
  opt.stop_after_epochs = stop_after;
  return Trainer(std::move(c), opt).fit();
}

}  // namespace

TEST(Trainer, WritesEveryFileOfTheRunDirectory) {
  std::string dir = fresh_dir("files");
  TrainResult r = run(small_config({"train.epochs=2"}), dir);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.epochs_completed, 2);
  for (const char* f : {"config.yaml", "train.log", "metrics.csv", "curves.svg", "report.html", "best.ckpt",
                        "last.ckpt", "env.json", "test_metrics.json"})
    EXPECT_TRUE(fs::exists(fs::path(dir) / f)) << f;
  MetricsTable t = MetricsTable::from_csv(slurp(fs::path(dir) / "metrics.csv"), "metrics.csv");
  ASSERT_EQ(t.size(), 2u);
  for (const char* col : {"epoch", "train_loss", "train_acc", "val_loss", "val_acc", "val_precision", "val_recall",
                          "val_f1", "val_top5_acc", "lr", "epoch_time_s", "images_per_s", "peak_rss_mib"})
    EXPECT_TRUE(t.has_column(col)) << col;
  // The resolved config reads back and records the overrides.
  Config back = config_from_yaml(slurp(fs::path(dir) / "config.yaml"), "config.yaml");
  EXPECT_EQ(back.get_int_list("model.channels"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(back.get_int("data.limit_train"), 600);
  // Test metrics exist and are plausible for 2 epochs on 480 images.
  double acc = -1;
  for (const auto& [k, v] : r.test_metrics)
    if (k == "test_acc") acc = v;
  EXPECT_GT(acc, 0.2);  // chance is 0.1
  EXPECT_LE(acc, 1.0);
  std::map<std::string, double> tm(r.test_metrics.begin(), r.test_metrics.end());
  for (const char* k : {"test_precision", "test_recall", "test_f1", "test_f1_weighted", "test_precision_weighted",
                        "test_top5_acc", "test_f1[Coat]", "test_recall[Ankle boot]", "test_precision[T-shirt/top]"})
    EXPECT_TRUE(tm.count(k)) << k;
  std::string svg = slurp(fs::path(dir) / "curves.svg");
  EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.find("<svg") != std::string::npos, true);
  std::string html = slurp(fs::path(dir) / "report.html");
  EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_NE(html.find("T-shirt/top"), std::string::npos);  // the confusion matrix names classes
  std::string env = slurp(fs::path(dir) / "env.json");
  for (const char* k : {"ember_version", "git_commit", "compiler", "cpu", "threads", "seed"})
    EXPECT_NE(env.find(k), std::string::npos) << k;
  // The commit the library was built from (cmake/GitCommit.cmake runs at
  // every build): the source tree's HEAD, "-dirty" when it has changes.
  const std::string commit = nlohmann::json::parse(env)["git_commit"];
  std::string head;
  if (FILE* git = popen(("git -C '" + std::string(EMBER_SOURCE_DIR) + "' rev-parse --short HEAD 2>/dev/null").c_str(),
                        "r")) {
    char buf[64] = {};
    while (std::fgets(buf, sizeof(buf), git)) head += buf;
    if (pclose(git) != 0) head.clear();
  }
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.pop_back();
  if (head.empty()) EXPECT_EQ(commit, "unknown");
  else EXPECT_TRUE(commit == head || commit == head + "-dirty") << commit << " built, HEAD is " << head;
}

TEST(Trainer, ResumeEqualsUninterruptedBitwise) {
  // Timing columns are measurements; without them metrics.csv is a pure
  // function of the seed and the thread count.
  std::string a = fresh_dir("uninterrupted"), b = fresh_dir("resumed");
  run(small_config({"log.timing=false", "model.dropout=0.5"}), a);
  TrainResult first = run(small_config({"log.timing=false", "model.dropout=0.5"}), b, /*stop_after=*/1);
  EXPECT_FALSE(first.finished);
  EXPECT_EQ(first.epochs_completed, 1);
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  TrainResult second = Trainer::resume(b, opt).fit();
  EXPECT_TRUE(second.finished);
  EXPECT_EQ(second.epochs_completed, 3);
  EXPECT_EQ(slurp(fs::path(a) / "metrics.csv"), slurp(fs::path(b) / "metrics.csv"));
  StateDict wa = load_checkpoint((fs::path(a) / "last.ckpt").string()).model;
  StateDict wb = load_checkpoint((fs::path(b) / "last.ckpt").string()).model;
  ASSERT_EQ(wa.size(), wb.size());
  for (const auto& [k, v] : wa) EXPECT_TRUE(ember::equal(v, wb.at(k))) << k;
  EXPECT_NE(slurp(fs::path(b) / "train.log").find("resuming"), std::string::npos);
}

TEST(Trainer, SameSeedSameMetricsDifferentSeedDiffers) {
  std::string a = fresh_dir("seed_a"), b = fresh_dir("seed_b"), c = fresh_dir("seed_c");
  run(small_config({"log.timing=false", "train.epochs=1"}), a);
  run(small_config({"log.timing=false", "train.epochs=1"}), b);
  run(small_config({"log.timing=false", "train.epochs=1", "train.seed=7"}), c);
  EXPECT_EQ(slurp(fs::path(a) / "metrics.csv"), slurp(fs::path(b) / "metrics.csv"));
  EXPECT_NE(slurp(fs::path(a) / "metrics.csv"), slurp(fs::path(c) / "metrics.csv"));
}

TEST(EarlyStopping, StopsAtTheRightEpochOnAScriptedSequence) {
  // val_loss: improves at epochs 1, 2, 4 (by more than min_delta), then stalls.
  const std::vector<double> loss = {1.0, 0.8, 0.805, 0.7, 0.6999, 0.71, 0.72, 0.5};
  EarlyStopping es("val_loss", MetricMode::Min, /*patience=*/3, /*min_delta=*/0.001);
  int64_t stopped = -1;
  for (size_t i = 0; i < loss.size(); ++i) {
    if (es.update(loss[i], static_cast<int64_t>(i + 1))) {
      stopped = static_cast<int64_t>(i + 1);
      break;
    }
  }
  EXPECT_EQ(stopped, 7);  // epochs 5, 6, 7 without an improvement > 0.001
  EXPECT_EQ(es.tracker().best_epoch(), 4);
  EXPECT_DOUBLE_EQ(es.tracker().best(), 0.7);
  // Max mode (accuracy), and the state survives a JSON round trip.
  EarlyStopping acc("val_acc", resolve_mode("auto", "val_acc"), 2, 0.0);
  EXPECT_FALSE(acc.update(0.5, 1));
  EXPECT_FALSE(acc.update(0.6, 2));
  EXPECT_FALSE(acc.update(0.6, 3));
  EarlyStopping restored("val_acc", MetricMode::Max, 2, 0.0);
  restored.load_state_json(acc.state_json());
  EXPECT_TRUE(restored.update(0.55, 4));
  EXPECT_EQ(resolve_mode("auto", "val_loss"), MetricMode::Min);
  EXPECT_EQ(resolve_mode("auto", "val_f1"), MetricMode::Max);
}

TEST(Trainer, EarlyStoppingEndsTheRun) {
  std::string dir = fresh_dir("early");
  // min_delta 10: no epoch after the first counts as an improvement.
  TrainResult r = run(small_config({"train.epochs=6", "train.early_stopping.monitor=val_loss",
                                    "train.early_stopping.patience=2", "train.early_stopping.min_delta=10"}),
                      dir);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.epochs_completed, 3);
  EXPECT_NE(slurp(fs::path(dir) / "train.log").find("early stopping: val_loss did not improve for 2 epochs"),
            std::string::npos);
}

TEST(Trainer, GradAccumulationClippingAndSchedules) {
  std::string dir = fresh_dir("accum");
  TrainResult r = run(small_config({"train.epochs=2", "train.grad_accum_steps=2", "train.grad_clip_norm=1.0",
                                    "optim.name=sgd", "optim.lr=0.1", "optim.momentum=0.9", "schedule.name=step",
                                    "schedule.step_size=1", "schedule.gamma=0.5", "log.timing=false"}),
                      dir);
  EXPECT_TRUE(r.finished);
  MetricsTable t = MetricsTable::from_csv(slurp(fs::path(dir) / "metrics.csv"), "metrics.csv");
  EXPECT_EQ(t.column("lr"), (std::vector<double>{0.1, 0.05}));  // the lr each epoch trained with
  // 480 training images / 50 per batch = 10 batches = 5 optimizer steps per epoch.
  EXPECT_EQ(load_checkpoint((fs::path(dir) / "last.ckpt").string()).step, 10);
}

namespace {
// A user model: a linear classifier whose output turns NaN on its 3rd call.
class NanAfterTwo : public nn::Module {
 public:
  NanAfterTwo() : Module("NanAfterTwo") { w = register_parameter("w", zeros({784, 10})); }
  Tensor forward(const Tensor& x) override {
    Tensor y = x.flatten(1).matmul(w);
    return ++calls_ >= 3 ? y * std::numeric_limits<double>::quiet_NaN() : y;
  }
  Tensor w;

 private:
  int calls_ = 0;
};
ModelRegistration nan_model{{"test_nan", "test model", Schema{}, [](const Config&, const DataInfo&) {
                               return std::make_shared<NanAfterTwo>();
                             }}};
}  // namespace

TEST(Trainer, NonFiniteLossStopsNamingTheStepOrSkips) {
  std::string dir = fresh_dir("nan");
  expect_error([&] { run(small_config({"model.name=test_nan", "train.epochs=1"}), dir); },
               {"non-finite loss", "epoch 1, batch 3", "lower optim.lr", "train.grad_clip_norm",
                "train.nonfinite_loss=skip"});
  EXPECT_THROW(run(small_config({"model.name=test_nan", "train.epochs=1"}), fresh_dir("nan2")), RunError);
  std::string skip = fresh_dir("nan_skip");
  TrainResult r = run(small_config({"model.name=test_nan", "train.epochs=1", "train.nonfinite_loss=skip",
                                    "data.val_fraction=0", "train.checkpoint.monitor=train_loss"}),
                      skip);
  EXPECT_TRUE(r.finished);
  EXPECT_NE(slurp(fs::path(skip) / "train.log").find("skipped"), std::string::npos);
}

TEST(Trainer, ResumeFromCorruptCheckpointChangesNothing) {
  std::string dir = fresh_dir("corrupt");
  run(small_config({"train.epochs=2"}), dir, 1);
  fs::path last = fs::path(dir) / "last.ckpt";
  std::string metrics_before = slurp(fs::path(dir) / "metrics.csv");
  // Truncate the checkpoint to half its size.
  std::string bytes = slurp(last);
  { std::ofstream(last, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2)); }
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  expect_error([&] { Trainer::resume(dir, opt).fit(); }, {"last.ckpt", "truncated"});
  EXPECT_EQ(slurp(fs::path(dir) / "metrics.csv"), metrics_before);
  // Not a run directory / no checkpoint.
  expect_error([&] { Trainer::resume(fresh_dir("empty_resume"), opt); }, {"is not a run directory"});
}

TEST(Trainer, ResumeWithAnIncompatibleModelNamesTheMismatch) {
  std::string dir = fresh_dir("incompatible");
  run(small_config({"train.epochs=2"}), dir, 1);
  std::string ckpt_before = slurp(fs::path(dir) / "last.ckpt");
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  // Refused before anything loads: the checkpoint's model was built with 16.
  expect_error([&] { Trainer::resume(dir, opt, {"model.hidden=32"}).fit(); },
               {"model.hidden cannot change on resume", "model.hidden=16"});
  EXPECT_EQ(slurp(fs::path(dir) / "last.ckpt"), ckpt_before);
}

TEST(Trainer, MissingDataSetNamesThePackageOrPath) {
  expect_error([] { run(small_config({"data.root=/nonexistent/fmnist"}), fresh_dir("nodata")); },
               {"/nonexistent/fmnist", "dataset-fashion-mnist", "data.root"});
  expect_error([] { run(small_config({"data.dataset=csv"}), fresh_dir("nocsv")); }, {"data.train_file"});
}

TEST(Checkpoint, DiskFullWhileSavingKeepsThePreviousCheckpoint) {
  std::string dir = fresh_dir("diskfull");
  fs::create_directories(dir);
  std::string path = (fs::path(dir) / "last.ckpt").string();
  Checkpoint small;
  small.model.insert("w", ones({4}));
  small.epoch = 1;
  save_checkpoint(small, path);
  std::string before = slurp(path);
  // A file-size limit makes write() fail with EFBIG, as a full disk fails it.
  Checkpoint big;
  big.model.insert("w", ones({1 << 20}));
  big.epoch = 2;
  struct rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 64 * 1024;
  setrlimit(RLIMIT_FSIZE, &lim);
  bool threw = false;
  try {
    save_checkpoint(big, path);
  } catch (const Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("last.ckpt"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(load_checkpoint(path).epoch, 1);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(Checkpoint, RoundTripAndFormatCheck) {
  std::string dir = fresh_dir("ckpt");
  fs::create_directories(dir);
  Checkpoint c;
  c.model.insert("layer.weight", arange(6, TensorOptions().dtype(kFloat32)).reshape({2, 3}));
  c.scheduler = {{"last_epoch", 3}};
  c.rng_state = default_generator().get_state();
  c.epoch = 3;
  c.step = 42;
  c.config_yaml = "model:\n  name: cnn\n";
  c.metrics_csv = "epoch\n1\n";
  c.trainer_json = "{\"x\":1}";
  std::string path = (fs::path(dir) / "c.ckpt").string();
  save_checkpoint(c, path);
  Checkpoint b = load_checkpoint(path);
  EXPECT_EQ(b.epoch, 3);
  EXPECT_EQ(b.step, 42);
  EXPECT_EQ(b.config_yaml, c.config_yaml);
  EXPECT_EQ(b.metrics_csv, c.metrics_csv);
  EXPECT_EQ(b.scheduler.at("last_epoch"), 3);
  EXPECT_TRUE(ember::equal(b.model.at("layer.weight"), c.model.at("layer.weight")));
  EXPECT_TRUE(ember::equal(b.rng_state, c.rng_state));
  // A plain safetensors file is not a checkpoint.
  std::string plain = (fs::path(dir) / "w.safetensors").string();
  safetensors::save_file(StateDict{{"w", ones({2})}}, plain);
  expect_error([&] { load_checkpoint(plain); }, {"w.safetensors", "not an Ember training checkpoint"});
}

TEST(Trainer, Bf16MixedPrecisionTrainsWithFloat32Weights) {
  std::string dir = fresh_dir("bf16");
  TrainResult r = run(small_config({"train.epochs=2", "train.mixed_precision=bf16"}), dir);
  EXPECT_TRUE(r.finished);
  double acc = -1;
  for (const auto& [k, v] : r.test_metrics)
    if (k == "test_acc") acc = v;
  EXPECT_GT(acc, 0.2);  // chance is 0.1
  for (const auto& [k, v] : load_checkpoint((fs::path(dir) / "last.ckpt").string()).model)
    EXPECT_TRUE(v.dtype() == kFloat32 || v.dtype() == kInt64) << k;  // master weights (and BN's counter)
}

TEST(Trainer, ReduceLROnPlateauIsFedTheMonitoredMetric) {
  // Monitoring accuracy as if lower were better: every improving epoch is a
  // plateau for the scheduler, which halves the lr after patience 0.
  std::string dir = fresh_dir("plateau");
  run(small_config({"train.epochs=3", "schedule.name=plateau", "schedule.patience=0", "schedule.factor=0.5",
                    "train.checkpoint.monitor=train_acc", "train.checkpoint.mode=min", "log.timing=false"}),
      dir);
  MetricsTable t = MetricsTable::from_csv(slurp(fs::path(dir) / "metrics.csv"), "metrics.csv");
  std::vector<double> acc = t.column("train_acc"), lr = t.column("lr");
  ASSERT_EQ(lr.size(), 3u);
  EXPECT_EQ(lr[0], 0.001);
  // Epoch 2 trains at half the lr iff epoch 1's accuracy did not beat the
  // initial best (it always does: the first value sets it), so lr[1] is
  // unchanged; epoch 3 halves when epoch 2's accuracy was not lower.
  EXPECT_EQ(lr[1], 0.001);
  EXPECT_EQ(lr[2], acc[1] < acc[0] * (1 - 1e-4) ? 0.001 : 0.0005);
}

TEST(Trainer, CsvRegressionReportsMseAndMae) {
  // y = 2 a - b + 0.5 on 400 rows; an MLP should fit it closely.
  std::string dir = fresh_dir("regression");
  fs::create_directories(dir);
  auto write = [&](const std::string& name, int rows, int seed) {
    std::ofstream f(fs::path(dir) / name);
    f << "a,b,y\n";
    uint64_t s = static_cast<uint64_t>(seed);
    auto next = [&s] { s = s * 6364136223846793005ULL + 1442695040888963407ULL; return static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1; };
    for (int i = 0; i < rows; ++i) {
      double a = next(), b = next();
      f << a << "," << b << "," << 2 * a - b + 0.5 << "\n";
    }
    return (fs::path(dir) / name).string();
  };
  std::string train = write("train.csv", 400, 1), test = write("test.csv", 100, 2);
  Config c = load_config("", {"model.name=mlp", "model.hidden=[32]", "data.dataset=csv", "data.task=regression",
                              "data.label_column=y", "data.train_file=" + train, "data.test_file=" + test,
                              "data.batch_size=20", "data.num_workers=0", "train.epochs=30", "optim.lr=0.01",
                              "log.progress=none", "train.threads=2"});
  TrainResult r = run(c, (fs::path(dir) / "run").string());
  ASSERT_TRUE(r.finished);
  std::map<std::string, double> m(r.test_metrics.begin(), r.test_metrics.end());
  ASSERT_TRUE(m.count("test_mse") && m.count("test_mae"));
  // The targets have variance ~1.7; a fitted model is far below that.
  EXPECT_LT(m["test_mse"], 0.02);
  EXPECT_LT(m["test_mae"], 0.12);
  EXPECT_NEAR(m["test_loss"], m["test_mse"], 1e-6 * m["test_mse"]);  // float32 loss vs double sums
  MetricsTable t = MetricsTable::from_csv(slurp(fs::path(dir) / "run" / "metrics.csv"), "metrics.csv");
  EXPECT_TRUE(t.has_column("val_mae"));
  EXPECT_LT(t.column("val_mse").back(), t.column("val_mse").front());
  // A non-numeric target names the file, line and column.
  { std::ofstream(fs::path(dir) / "bad.csv") << "a,b,y\n1,2,3\n1,2,x\n"; }
  expect_error([&] {
    Config bad = load_config("", {"model.name=mlp", "data.dataset=csv", "data.task=regression", "data.label_column=y",
                                  "data.train_file=" + (fs::path(dir) / "bad.csv").string(), "data.test_file=" + test,
                                  "log.progress=none"});
    run(bad, (fs::path(dir) / "run_bad").string());
  }, {"bad.csv", "line 3", "'x'", "not a number"});
}

// A monitor that names no logged metric is refused before the first epoch,
// with the key and the metrics it may watch; those choices are exactly the
// columns of metrics.csv.
TEST(Trainer, UnknownMonitorFailsBeforeTheFirstEpoch) {
  std::string ok_dir = fresh_dir("monitor_ok");
  run(small_config({"train.epochs=1"}), ok_dir);
  std::string header = slurp(fs::path(ok_dir) / "metrics.csv");
  header = header.substr(0, header.find('\n'));
  std::string choices;
  for (char ch : header) choices += ch == ',' ? std::string(", ") : std::string(1, ch);

  std::string dir = fresh_dir("monitor_bad");
  std::string msg;
  try {
    run(small_config({"train.checkpoint.monitor=val_acuracy"}), dir);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("train.checkpoint.monitor: metric 'val_acuracy' is not logged; choose one of " + choices),
            std::string::npos)
      << msg;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "metrics.csv"));  // nothing trained

  expect_error([&] { run(small_config({"train.early_stopping.monitor=val_los"}), fresh_dir("monitor_es")); },
               {"train.early_stopping.monitor", "'val_los'", "val_loss"});
  // Without a validation split val_* reads as train_*, which has no f1.
  expect_error([&] {
    run(small_config({"data.val_fraction=0", "train.checkpoint.monitor=val_f1"}), fresh_dir("monitor_noval"));
  }, {"'val_f1' (read as 'train_f1': there is no validation split)", "train_acc"});
}

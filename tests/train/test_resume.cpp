// Resume never half-applies a setting (Note [resume overrides]): an override
// takes effect from the next step, or is refused naming the key; a finished
// run continues when train.epochs is raised; every command is in the run's
// history.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sstream>

#include "ember/io/atomic_file.h"
#include "ember/train/checkpoint.h"
#include "ember/train/config.h"
#include "ember/train/report.h"
#include "ember/train/resume.h"
#include "ember/train/trainer.h"
#include "ember/train/zoo.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

namespace {

Config base(std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"model.name=mlp", "model.hidden=[8]", "data.limit_train=200", "data.limit_test=50",
                                "data.val_fraction=0.2", "data.batch_size=50", "data.num_workers=0",
                                "train.epochs=2", "train.threads=2", "log.progress=none", "log.timing=false",
                                "optim.name=sgd", "optim.lr=0.01"};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_config("", o);
}

ResumePlan plan(std::vector<std::string> overrides, ResumedRun run = {1, false, false}, ResumeResets r = {}) {
  Config before = base(), after = before;
  for (const std::string& o : overrides) after.apply_override(o);
  return plan_resume(before, after, run, r);
}

TEST(ResumePlan, AppliesRuntimeSettingsAndMoreEpochs) {
  ResumePlan p = plan({"train.threads=1", "data.num_workers=2", "train.grad_clip_norm=1.0", "train.epochs=5"});
  ASSERT_EQ(p.changes.size(), 4u);
  EXPECT_FALSE(p.continues_finished_run);
  EXPECT_TRUE(plan({}).changes.empty());
  EXPECT_TRUE(plan({"optim.lr=0.01"}).changes.empty()) << "the same value is no change";
}

TEST(ResumePlan, RefusesWhatTheCheckpointRestoresUnlessReset) {
  expect_error([] { plan({"optim.lr=5.0"}); }, {"optim.lr=", "(was 0.01)", "add --reset optimizer"});
  expect_error([] { plan({"schedule.name=cosine"}); }, {"schedule.name=cosine", "add --reset schedule"});
  ResumePlan p = plan({"optim.lr=5.0"}, {1, false, false}, {.optimizer = true});
  EXPECT_TRUE(p.resets.optimizer);
  EXPECT_TRUE(p.resets.schedule) << "a fresh optimizer restarts its schedule";
  EXPECT_NO_THROW(plan({"schedule.name=cosine"}, {1, false, false}, {.schedule = true}));
  EXPECT_NO_THROW(plan({"schedule.name=cosine"}, {1, false, false}, {.optimizer = true}));
}

TEST(ResumePlan, RefusesTheModelTheDataAndTheSeed) {
  expect_error([] { plan({"model.hidden=[16]"}); }, {"model.hidden cannot change on resume", "model.hidden=[8]",
                                                     "the model built with it"});
  expect_error([] { plan({"data.batch_size=25"}); }, {"data.batch_size cannot change", "batches per epoch"});
  expect_error([] { plan({"train.seed=7"}); }, {"train.seed cannot change", "the RNG"});
  expect_error([] { plan({"train.checkpoint.monitor=val_acc"}); }, {"train.checkpoint.monitor cannot change"});
}

TEST(ResumePlan, EpochsMustLeaveWorkAndAFinishedRunNeedsMore) {
  expect_error([] { plan({"train.epochs=1"}, {2, false, false}); },
               {"train.epochs=1: the run has completed 2 epochs already; give more than 2"});
  const ResumedRun finished{2, true, false};
  expect_error([&] { plan({"train.threads=1"}, finished); },
               {"the run finished after 2 epochs, so train.threads=1 would not run", "raise train.epochs above 2"});
  expect_error([&] { plan({}, finished, {.schedule = true}); }, {"--reset has nothing to apply to"});
  EXPECT_TRUE(plan({"train.epochs=4"}, finished).continues_finished_run);
  EXPECT_NO_THROW(plan({}, finished)) << "resuming a finished run without changes is a no-op";
  EXPECT_TRUE(plan({"train.epochs=4", "train.early_stopping.patience=9"}, {2, true, true}).continues_finished_run);
}

TEST(ResumePlan, ParsesResets) {
  ResumeResets r = parse_resets({"optimizer,schedule"});
  EXPECT_TRUE(r.optimizer && r.schedule);
  EXPECT_FALSE(parse_resets({"schedule"}).optimizer);
  expect_error([] { parse_resets({"weights"}); }, {"--reset: expected optimizer or schedule, got 'weights'"});
}

std::string fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ember_resume_" + name);
  fs::remove_all(p);
  return p.string();
}

TrainResult train_run(Config c, const std::string& dir) {
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  opt.run_dir = dir;
  opt.command_line = "ember train test";
  return Trainer(std::move(c), opt).fit();
}

TrainResult resume(const std::string& dir, std::vector<std::string> overrides, ResumeResets resets = {}) {
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  opt.resets = resets;
  opt.command_line = "ember train --resume";
  return Trainer::resume(dir, opt, overrides).fit();
}

std::vector<double> lr_column(const std::string& dir) {
  return MetricsTable::from_csv(io::read_file((fs::path(dir) / "metrics.csv").string()), "metrics.csv").column("lr");
}

// A finished run continues when train.epochs is raised, and a new lr with
// --reset optimizer is the lr of the epochs that follow (metrics.csv logs
// the lr each epoch ran with); the report and history.yaml say since when.
TEST(Resume, ExtendsAFinishedRunAndAppliesANewLrForReal) {
  const std::string dir = fresh_dir("extend");
  ASSERT_TRUE(train_run(base(), dir).finished);
  EXPECT_EQ(load_checkpoint((fs::path(dir) / "last.ckpt").string()).epoch, 2);
  // Refused: the lr would lose to the restored optimizer; the run is untouched.
  const std::string before = io::read_file((fs::path(dir) / "last.ckpt").string());
  expect_error([&] { resume(dir, {"train.epochs=4", "optim.lr=0.5"}); }, {"optim.lr=0.5", "--reset optimizer"});
  EXPECT_EQ(io::read_file((fs::path(dir) / "last.ckpt").string()), before);

  TrainResult r = resume(dir, {"train.epochs=4", "optim.lr=0.5"}, {.optimizer = true});
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.epochs_completed, 4);
  const std::vector<double> lr = lr_column(dir);
  ASSERT_EQ(lr.size(), 4u);
  EXPECT_DOUBLE_EQ(lr[0], 0.01);
  EXPECT_DOUBLE_EQ(lr[1], 0.01);
  EXPECT_DOUBLE_EQ(lr[2], 0.5);
  EXPECT_DOUBLE_EQ(lr[3], 0.5);
  // The config the run holds now is the one in force, and history says since when.
  EXPECT_NE(io::read_file((fs::path(dir) / "config.yaml").string()).find("lr: 0.5"), std::string::npos);
  const std::string history = io::read_file((fs::path(dir) / "history.yaml").string());
  EXPECT_NE(history.find("command: ember train test"), std::string::npos) << history;
  EXPECT_NE(history.find("after_epoch: 2"), std::string::npos) << history;
  EXPECT_NE(history.find("optim.lr: [0.01, 0.5]"), std::string::npos) << history;
  EXPECT_NE(history.find("reset: [optimizer, schedule]"), std::string::npos) << history;
  const std::string html = io::read_file((fs::path(dir) / "report.html").string());
  EXPECT_NE(html.find("<h2>Commands</h2>"), std::string::npos);
  EXPECT_NE(html.find("epoch 3 ("), std::string::npos);
  EXPECT_NE(html.find("optim.lr: 0.01 -&gt; 0.5; train.epochs: 2 -&gt; 4; reset optimizer, schedule"),
            std::string::npos);
  // Beside the configuration (the values in force now): which value ran when.
  EXPECT_NE(html.find("<tr><td class=\"name\">optim.lr</td><td class=\"name\">0.01 (epochs 1-2); 0.5 (from epoch 3)"
                      "</td></tr>"),
            std::string::npos)
      << html;
  // Nothing more to do: a no-op that exits as finished.
  EXPECT_TRUE(resume(dir, {}).finished);
  EXPECT_EQ(lr_column(dir).size(), 4u);
  // Each no-op is in the history and stays there (it used to vanish at the next resume).
  EXPECT_TRUE(resume(dir, {}).finished);
  const std::string after = io::read_file((fs::path(dir) / "history.yaml").string());
  size_t commands = 0;
  for (size_t at = after.find("command:"); at != std::string::npos; at = after.find("command:", at + 1)) ++commands;
  EXPECT_EQ(commands, 4u) << after;  // the first run, the extension, two no-ops
}

// A schedule as long as train.epochs (cosine without t_max, linear,
// onecycle) restored from last.ckpt would end before the new epochs do:
// extending the run needs --reset schedule.
TEST(ResumePlan, RefusesToExtendAnEpochLongScheduleWithoutAReset) {
  auto cosine_plan = [](std::vector<std::string> extra, ResumeResets r) {
    Config before = base({"schedule.name=cosine"}), after = before;
    for (const std::string& o : extra) after.apply_override(o);
    return plan_resume(before, after, {2, true, false}, r);
  };
  expect_error([&] { cosine_plan({"train.epochs=4"}, {}); },
               {"train.epochs=4 (was 2)", "cosine schedule", "past its end", "add --reset schedule",
                "schedule.t_max"});
  EXPECT_TRUE(cosine_plan({"train.epochs=4"}, {.schedule = true}).continues_finished_run);
  EXPECT_NO_THROW(cosine_plan({"train.epochs=4", "schedule.t_max=2"}, {.schedule = true}));
  // A schedule of its own length (step) extends as it is.
  EXPECT_NO_THROW(plan({"train.epochs=4"}, {2, true, false}));
}

// --reset schedule keeps the optimizer's moments but starts the new schedule
// from optim.lr: the restored optimizer state held the old cosine's last lr
// (0 at its end), which a schedule without its own lr values (none) kept.
TEST(Resume, ResetScheduleStartsTheNewScheduleFromTheConfiguredLr) {
  const std::string dir = fresh_dir("reset_schedule");
  ASSERT_TRUE(train_run(base({"schedule.name=cosine", "schedule.warmup_epochs=0", "train.epochs=1"}), dir).finished);
  TrainResult r = resume(dir, {"train.epochs=3", "schedule.name=none"}, {.schedule = true});
  EXPECT_TRUE(r.finished);
  const std::vector<double> lr = lr_column(dir);
  ASSERT_EQ(lr.size(), 3u);
  EXPECT_DOUBLE_EQ(lr[1], 0.01);
  EXPECT_DOUBLE_EQ(lr[2], 0.01);
}

// An interrupt mid-epoch (Note [interrupts]) saves the epoch in progress;
// the resume finishes it and the run ends bit for bit as an uninterrupted
// one, also when the interrupt falls inside a gradient-accumulation window
// (the trainer stops at the next optimizer step).
TEST(Resume, AnInterruptMidEpochResumesBitwise) {
  // 160 training samples in batches of 50: 4 batches per epoch.
  for (auto [accum, stops_after] : {std::pair{"train.grad_accum_steps=1", "1"}, std::pair{"train.grad_accum_steps=2", "2"}}) {
    SCOPED_TRACE(accum);
    const Config c = base({accum, "train.epochs=3", "model.dropout=0.2"});
    const std::string a = fresh_dir("uninterrupted"), b = fresh_dir("interrupted");
    ASSERT_TRUE(train_run(c, a).finished);
    std::ostringstream out;
    TrainOptions opt;
    opt.out = &out;
    opt.run_dir = b;
    opt.handle_interrupts = true;
    opt.on_batch_end = [](int64_t epoch, int64_t batch) {
      if (epoch == 1 && batch == 0) std::raise(SIGINT);  // a Ctrl-C during epoch 2's first batch
    };
    TrainResult r = Trainer(c, opt).fit();
    EXPECT_FALSE(r.finished);
    EXPECT_EQ(r.interrupt_signal, SIGINT);
    EXPECT_EQ(r.epochs_completed, 1);
    Checkpoint mid = load_checkpoint((fs::path(b) / "last.ckpt").string());
    EXPECT_EQ(mid.epoch, 1);
    EXPECT_NE(mid.trainer_json.find("\"partial_epoch\""), std::string::npos);
    // Stopped after batch 1 (accum 1), or 2 (accum 2: the step boundary).
    EXPECT_NE(mid.trainer_json.find(std::string("\"batch\":") + stops_after), std::string::npos) << mid.trainer_json;
    EXPECT_NE(out.str().find("interrupted at epoch 2, batch"), std::string::npos) << out.str();
    TrainResult done = resume(b, {});
    EXPECT_TRUE(done.finished);
    EXPECT_EQ(io::read_file((fs::path(a) / "metrics.csv").string()), io::read_file((fs::path(b) / "metrics.csv").string()));
    StateDict wa = load_checkpoint((fs::path(a) / "last.ckpt").string()).model;
    StateDict wb = load_checkpoint((fs::path(b) / "last.ckpt").string()).model;
    ASSERT_EQ(wa.size(), wb.size());
    for (const auto& [k, v] : wa) EXPECT_TRUE(ember::equal(v, wb.at(k))) << k;
  }
}

}  // namespace

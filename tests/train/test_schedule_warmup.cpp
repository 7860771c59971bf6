// schedule.warmup_steps / warmup_epochs: a linear ramp over optimizer steps
// that scales the epoch schedule's lr, capped to warmup_max_fraction of the
// run (issue 19: a 1-epoch run must not spend its epoch in warm-up).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "ember/ember.h"
#include "ember/train/optim_setup.h"

using namespace ember;
using namespace ember::train;

namespace {

Config config_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"model.name=mlp", "optim.name=sgd", "optim.lr=1.0"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_config("", all);
}

struct Fixture {
  nn::Linear model{2, 2};
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<Schedule> schedule;
  Fixture(const Config& c, int64_t steps_per_epoch) {
    opt = make_optimizer(c, model);
    schedule = std::make_unique<Schedule>(c, *opt, steps_per_epoch, true);
  }
  // The lr in force for each optimizer step of `epochs` epochs.
  std::vector<double> run(int64_t epochs, int64_t steps_per_epoch) {
    std::vector<double> lrs;
    for (int64_t e = 0; e < epochs; ++e) {
      for (int64_t s = 0; s < steps_per_epoch; ++s) {
        lrs.push_back(schedule->lr());
        schedule->after_optimizer_step();
      }
      schedule->after_epoch(0.0);
    }
    return lrs;
  }
};

}  // namespace

TEST(ScheduleWarmup, StepsRampLinearlyThenTheScheduleRuns) {
  // 10 epochs of 10 steps, warm-up 8 steps from 0.2: lr = 0.2 + 0.8 s / 8.
  Config c = config_with({"train.epochs=10", "schedule.warmup_steps=8", "schedule.warmup_start_factor=0.2"});
  Fixture f(c, 10);
  std::vector<double> lrs = f.run(2, 10);
  for (int s = 0; s <= 8; ++s) EXPECT_NEAR(lrs[s], 0.2 + 0.8 * s / 8.0, 1e-12) << "step " << s;
  EXPECT_DOUBLE_EQ(lrs[9], 1.0);
  EXPECT_DOUBLE_EQ(lrs[19], 1.0);  // no schedule: constant after warm-up
  EXPECT_EQ(f.schedule->warmup_steps(), 8);
  EXPECT_EQ(f.schedule->warmup_steps_requested(), 0);  // not capped
}

TEST(ScheduleWarmup, OneEpochRunIsNotAllWarmUp) {
  // The README's quick demo keeps the config's warmup_epochs: 1; a 1-epoch
  // run of 100 steps warms up for 10 (the 0.1 cap), then trains at full lr.
  Config c = config_with({"train.epochs=1", "schedule.warmup_epochs=1"});
  Fixture f(c, 100);
  EXPECT_EQ(f.schedule->warmup_steps(), 10);
  EXPECT_EQ(f.schedule->warmup_steps_requested(), 100);
  std::vector<double> lrs = f.run(1, 100);
  EXPECT_NEAR(lrs[0], 0.1, 1e-12);
  EXPECT_NEAR(lrs[5], 0.1 + 0.9 * 0.5, 1e-12);
  for (int s = 10; s < 100; ++s) ASSERT_DOUBLE_EQ(lrs[s], 1.0) << "step " << s;
}

TEST(ScheduleWarmup, EpochsCountInStepsUnderTheCap) {
  Config c = config_with({"train.epochs=20", "schedule.warmup_epochs=1", "schedule.warmup_max_fraction=0.5"});
  Fixture f(c, 4);
  EXPECT_EQ(f.schedule->warmup_steps(), 4);
  std::vector<double> lrs = f.run(2, 4);
  EXPECT_NEAR(lrs[0], 0.1, 1e-12);
  EXPECT_NEAR(lrs[2], 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(lrs[4], 1.0);
}

TEST(ScheduleWarmup, ScalesTheCosineScheduleWithoutDisturbingIt) {
  // Cosine over 4 epochs (PyTorch's closed form, eta_min 0): epoch e's lr is
  // (1 + cos(pi e / 4)) / 2. Warm-up of 6 steps of 4 per epoch crosses the
  // first epoch boundary: step 5 (epoch 1) = cosine(1) x (0.1 + 0.9 x 5/6).
  Config c = config_with({"train.epochs=4", "schedule.name=cosine", "schedule.warmup_steps=6",
                          "schedule.warmup_max_fraction=1"});
  Fixture f(c, 4);
  std::vector<double> lrs = f.run(4, 4);
  auto cosine = [](int e) { return (1 + std::cos(std::numbers::pi * e / 4)) / 2; };
  EXPECT_NEAR(lrs[0], 0.1, 1e-12);
  EXPECT_NEAR(lrs[3], 0.1 + 0.9 * 3 / 6.0, 1e-12);
  EXPECT_NEAR(lrs[5], cosine(1) * (0.1 + 0.9 * 5 / 6.0), 1e-12);
  EXPECT_NEAR(lrs[6], cosine(1), 1e-12);
  EXPECT_NEAR(lrs[8], cosine(2), 1e-12);
  EXPECT_NEAR(lrs[15], cosine(3), 1e-12);
}

TEST(ScheduleWarmup, StateRoundTripResumesMidRamp) {
  Config c = config_with({"train.epochs=4", "schedule.name=cosine", "schedule.warmup_steps=6",
                          "schedule.warmup_max_fraction=1"});
  Fixture whole(c, 4);
  std::vector<double> expected = whole.run(4, 4);
  // Stop after epoch 1 (4 steps, mid-ramp), then resume in a new process's
  // objects: the optimizer's state, then the schedule's, as the trainer does.
  Fixture first(c, 4);
  first.run(1, 4);
  optim::SchedulerState state = first.schedule->state_dict();
  EXPECT_EQ(state.at("warmup.done"), 4.0);
  Fixture resumed(c, 4);
  resumed.opt->load_state_dict(first.opt->state_dict());
  resumed.schedule->load_state_dict(state);
  std::vector<double> rest = resumed.run(3, 4);
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_NEAR(rest[i], expected[i + 4], 1e-12) << "step " << i + 4;
}

TEST(ScheduleWarmup, BadSettingsAreRefusedNamingTheKeys) {
  try {
    Config c = config_with({"schedule.warmup_steps=5", "schedule.warmup_epochs=1"});
    Fixture f(c, 10);
    FAIL() << "both warm-up lengths were accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("schedule.warmup_steps (5) and schedule.warmup_epochs (1)"),
              std::string::npos) << e.what();
  }
  try {
    Config c = config_with({"schedule.name=onecycle", "schedule.warmup_steps=5"});
    Fixture f(c, 10);
    FAIL() << "onecycle accepted a warm-up";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("schedule.warmup_steps is not used with schedule.name = onecycle"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(config_with({"schedule.warmup_max_fraction=1.5"}), ConfigError);
}

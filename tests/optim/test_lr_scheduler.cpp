// LR schedulers vs PyTorch 1.13: 25 steps of learning rates (and OneCycleLR's
// momentum / beta1) for the cases of tests/data/gen_optim.py, state_dict
// resume, and errors.
#include <functional>
#include <memory>

#include "ember/optim.h"
#include "optim_golden.h"

using namespace ember;
using namespace ember::optim;
using ember::testing::expect_error;
using ember::testing::optim_golden;
using ember::testing::Problem;

namespace {

// Two groups: W at lr 0.1, b at lr 0.01 (the generator's sgd2 / adam2).
std::unique_ptr<Optimizer> sgd2(const Problem& pb, double momentum = 0) {
  std::vector<ParamGroup> groups = {{{pb.W}, {}}, {{pb.b}, {{"lr", 0.01}}}};
  return std::make_unique<SGD>(groups, SGDOptions{.lr = 0.1, .momentum = momentum});
}
std::unique_ptr<Optimizer> adam2(const Problem& pb) {
  std::vector<ParamGroup> groups = {{{pb.W}, {}}, {{pb.b}, {{"lr", 0.01}}}};
  return std::make_unique<Adam>(groups, AdamOptions{.lr = 0.1});
}

struct Case {
  std::function<std::unique_ptr<Optimizer>(const Problem&)> make_optimizer;
  std::function<std::shared_ptr<LRScheduler>(Optimizer&)> make_scheduler;
  const char* momentum_key = nullptr;  // "momentum" or "beta1" when cycled
};

std::shared_ptr<LRScheduler> sequential(Optimizer& o) {
  std::vector<std::shared_ptr<LRScheduler>> parts = {std::make_shared<LinearLR>(o, 0.1, 1.0, 4),
                                                     std::make_shared<CosineAnnealingLR>(o, 10, 0.001),
                                                     std::make_shared<ExponentialLR>(o, 0.8)};
  return std::make_shared<SequentialLR>(o, parts, std::vector<int64_t>{5, 12});
}

const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> c = {
      {"steplr", {[](auto& pb) { return sgd2(pb); }, [](Optimizer& o) { return std::make_shared<StepLR>(o, 3, 0.5); }}},
      {"multisteplr",
       {[](auto& pb) { return sgd2(pb); },
        [](Optimizer& o) { return std::make_shared<MultiStepLR>(o, std::vector<int64_t>{9, 2, 5, 5}, 0.3); }}},
      {"exponentiallr",
       {[](auto& pb) { return sgd2(pb); }, [](Optimizer& o) { return std::make_shared<ExponentialLR>(o, 0.9); }}},
      {"cosine",
       {[](auto& pb) { return sgd2(pb); },
        [](Optimizer& o) { return std::make_shared<CosineAnnealingLR>(o, 7, 0.001); }}},
      {"linear_warmup",
       {[](auto& pb) { return sgd2(pb); }, [](Optimizer& o) { return std::make_shared<LinearLR>(o, 0.25, 1.0, 6); }}},
      {"linear_decay",
       {[](auto& pb) { return sgd2(pb); }, [](Optimizer& o) { return std::make_shared<LinearLR>(o, 1.0, 0.1, 10); }}},
      {"onecycle_sgd_cos",
       {[](auto& pb) { return sgd2(pb, 0.9); },
        [](Optimizer& o) {
          return std::make_shared<OneCycleLR>(o, OneCycleLROptions{.max_lr = {0.5, 0.05}, .total_steps = 25});
        },
        "momentum"}},
      {"onecycle_adam_linear_three_phase",
       {[](auto& pb) { return adam2(pb); },
        [](Optimizer& o) {
          return std::make_shared<OneCycleLR>(o, OneCycleLROptions{.max_lr = {0.01},
                                                                   .epochs = 5,
                                                                   .steps_per_epoch = 6,
                                                                   .pct_start = 0.25,
                                                                   .anneal_strategy = "linear",
                                                                   .base_momentum = {0.8},
                                                                   .max_momentum = {0.9},
                                                                   .div_factor = 10,
                                                                   .final_div_factor = 100,
                                                                   .three_phase = true});
        },
        "beta1"}},
      {"onecycle_no_momentum",
       {[](auto& pb) { return sgd2(pb); },
        [](Optimizer& o) {
          return std::make_shared<OneCycleLR>(
              o, OneCycleLROptions{.max_lr = {1.0}, .total_steps = 24, .pct_start = 0.4, .cycle_momentum = false});
        }}},
      {"sequential", {[](auto& pb) { return sgd2(pb); }, sequential}},
  };
  return c;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << what;
}

std::vector<double> momenta(const Optimizer& o, const char* key) {
  std::vector<double> m;
  for (const auto& g : o.param_groups()) m.push_back(g.get(key));
  return m;
}

}  // namespace

TEST(LRScheduler, EveryScheduleMatchesPyTorch) {
  for (const auto& [name, c] : cases()) {
    const auto& lrs = optim_golden().sched_lr.at(name);
    const auto& moms = optim_golden().sched_momentum.at(name);
    ASSERT_EQ(lrs.size(), 25u) << name;
    Problem pb;
    auto opt = c.make_optimizer(pb);
    auto sched = c.make_scheduler(*opt);
    for (int step = 0; step < 25; ++step) {
      if (step > 0) {
        opt->step();
        sched->step();
      }
      const std::string what = fmt::format("{} step {}", name, step);
      expect_near_all(sched->get_last_lr(), lrs[step], what);
      std::vector<double> group_lrs;
      for (const auto& g : opt->param_groups()) group_lrs.push_back(g.lr());
      expect_near_all(group_lrs, lrs[step], what + " (group lr)");
      if (c.momentum_key) expect_near_all(momenta(*opt, c.momentum_key), moms[step], what + " momentum");
    }
  }
}

TEST(LRScheduler, ResumeFromStateDictContinuesExactly) {
  for (const auto& [name, c] : cases()) {
    const auto& lrs = optim_golden().sched_lr.at(name);
    Problem pb;
    auto opt = c.make_optimizer(pb);
    auto sched = c.make_scheduler(*opt);
    for (int step = 1; step <= 10; ++step) {
      opt->step();
      sched->step();
    }
    OptimizerStateDict osd = opt->state_dict();
    SchedulerState ssd = sched->state_dict();
    // A fresh optimizer and scheduler, as a resumed program builds them, then the saved state.
    Problem pb2;
    auto opt2 = c.make_optimizer(pb2);
    auto sched2 = c.make_scheduler(*opt2);
    opt2->load_state_dict(OptimizerStateDict::from_flat(osd.tensors(), osd.metadata()));
    sched2->load_state_dict(ssd);
    EXPECT_EQ(sched2->last_epoch(), sched->last_epoch()) << name;
    for (int step = 11; step < 25; ++step) {
      opt2->step();
      sched2->step();
      expect_near_all(sched2->get_last_lr(), lrs[step], fmt::format("{} resumed step {}", name, step));
    }
  }
}

TEST(LRScheduler, ClosedFormStepMatchesRecursive) {
  Problem pb;
  auto opt = sgd2(pb);
  CosineAnnealingLR cos(*opt, 7, 0.001);
  cos.step(int64_t{3});
  const auto& lrs = optim_golden().sched_lr.at("cosine");
  expect_near_all(cos.get_last_lr(), lrs[3], "cosine closed form at 3");
}

TEST(LRScheduler, ReduceLROnPlateauMatchesPyTorch) {
  const std::vector<double> metrics = {1.0, 0.9, 0.95, 0.91, 0.92, 0.905, 0.8, 0.85, 0.85, 0.85, 0.85, 0.79, 0.8,
                                       0.8, 0.8, 0.8,  0.8,  0.8,  0.8,   0.8, 0.7, 0.8,  0.8,  0.8,  0.8};
  std::map<std::string, ReduceLROnPlateauOptions> plateau_cases = {
      {"plateau_min_rel",
       {.mode = "min", .factor = 0.5, .patience = 2, .threshold = 0.01, .threshold_mode = "rel", .cooldown = 1,
        .min_lr = {0.01}}},
      {"plateau_max_abs",
       {.mode = "max", .factor = 0.2, .patience = 1, .threshold = 0.02, .threshold_mode = "abs", .cooldown = 0,
        .min_lr = {0.001, 0.0005}}},
  };
  for (const auto& [name, o] : plateau_cases) {
    const auto& lrs = optim_golden().sched_lr.at(name);
    ASSERT_EQ(lrs.size(), metrics.size());
    Problem pb;
    auto opt = sgd2(pb);
    ReduceLROnPlateau sched(*opt, o);
    std::unique_ptr<ReduceLROnPlateau> resumed;
    std::unique_ptr<Optimizer> opt2;
    Problem pb2;
    for (size_t i = 0; i < metrics.size(); ++i) {
      sched.step(metrics[i]);
      expect_near_all(sched.get_last_lr(), lrs[i], fmt::format("{} step {}", name, i + 1));
      if (resumed) {
        resumed->step(metrics[i]);
        expect_near_all(resumed->get_last_lr(), lrs[i], fmt::format("{} resumed step {}", name, i + 1));
      }
      if (i == 9) {  // checkpoint after 10 epochs and continue a copy alongside
        opt2 = sgd2(pb2);
        opt2->load_state_dict(opt->state_dict());
        resumed = std::make_unique<ReduceLROnPlateau>(*opt2, o);
        resumed->load_state_dict(sched.state_dict());
      }
    }
  }
}

TEST(LRScheduler, Errors) {
  Problem pb;
  auto opt = sgd2(pb);
  expect_error([&] { StepLR(*opt, 3, 0.1, /*last_epoch=*/5); }, {"'initial_lr' is not specified in param_groups[0]"});
  expect_error([&] { LinearLR(*opt, 1.5); }, {"starting multiplicative factor"});
  expect_error([&] { ReduceLROnPlateau(*opt, {.factor = 1.0}); }, {"factor should be < 1.0"});
  expect_error([&] { ReduceLROnPlateau(*opt, {.mode = "up"}); }, {"mode 'up' is unknown"});
  expect_error([&] { OneCycleLR(*opt, {.max_lr = {0.1}}); }, {"total_steps OR (epochs AND steps_per_epoch)"});
  expect_error([&] { OneCycleLR(*opt, {.max_lr = {0.1, 0.2, 0.3}, .total_steps = 5}); }, {"expected 1 or 2 values"});
  Problem pb2;
  Adagrad adagrad({pb2.W});
  expect_error([&] { OneCycleLR(adagrad, {.max_lr = {0.1}, .total_steps = 5}); }, {"must support momentum"});
  Problem pb3;
  auto opt3 = sgd2(pb3, 0.9);
  OneCycleLR one(*opt3, {.max_lr = {0.1}, .total_steps = 3});
  for (int i = 0; i < 3; ++i) one.step();
  expect_error([&] { one.step(); }, {"tried to step 5 times", "total steps is 3"});
  auto a = std::make_shared<StepLR>(*opt, 2);
  expect_error([&] { SequentialLR(*opt, {a, a}, {}); }, {"one more than the number of milestone points"});
}

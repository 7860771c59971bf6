// Optimizers vs PyTorch 1.13: 20-step trajectories on the problem of
// tests/data/gen_optim.py (fused and reference paths, float64 and float32),
// param groups, closures, zero_grad, state_dict resume and errors.
#include <functional>
#include <memory>

#include "ember/core/grad_mode.h"
#include "ember/optim.h"
#include "optim/reference.h"
#include "optim_golden.h"

using namespace ember;
using namespace ember::optim;
using ember::testing::expect_error;
using ember::testing::optim_golden;
using ember::testing::Problem;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(const Tensor& W, const Tensor& b)>;

template <typename Opt, typename Options>
MakeOptimizer plain(Options o) {
  return [o](const Tensor& W, const Tensor& b) { return std::make_unique<Opt>(std::vector<Tensor>{W, b}, o); };
}

// The generator's OPT_CASES, option for option.
const std::map<std::string, MakeOptimizer>& cases() {
  static const std::map<std::string, MakeOptimizer> c = {
      {"sgd", plain<SGD>(SGDOptions{.lr = 0.1})},
      {"sgd_momentum_dampening_wd",
       plain<SGD>(SGDOptions{.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01})},
      {"sgd_nesterov", plain<SGD>(SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true})},
      {"sgd_maximize", plain<SGD>(SGDOptions{.lr = 0.02, .momentum = 0.5, .maximize = true})},
      {"sgd_groups",
       [](const Tensor& W, const Tensor& b) {
         std::vector<ParamGroup> groups = {{{W}, {{"lr", 0.1}, {"momentum", 0.9}}}, {{b}, {}}};
         return std::make_unique<SGD>(groups, SGDOptions{.lr = 0.05});
       }},
      {"adam", plain<Adam>(AdamOptions{.lr = 0.01})},
      {"adam_amsgrad_wd", plain<Adam>(AdamOptions{
                              .lr = 0.02, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1,
                              .amsgrad = true})},
      {"adam_maximize", plain<Adam>(AdamOptions{.lr = 0.01, .maximize = true})},
      {"adam_groups",
       [](const Tensor& W, const Tensor& b) {
         std::vector<ParamGroup> groups = {
             {{W}, {}}, {{b}, {{"lr", 0.05}, {"beta1", 0.5}, {"beta2", 0.9}, {"weight_decay", 0.1}}}};
         return std::make_unique<Adam>(groups, AdamOptions{.lr = 0.01});
       }},
      {"adamw", plain<AdamW>(AdamWOptions{.lr = 0.01})},
      {"adamw_amsgrad", plain<AdamW>(AdamWOptions{.lr = 0.02, .weight_decay = 0.1, .amsgrad = true})},
      {"adamw_maximize", plain<AdamW>(AdamWOptions{.lr = 0.01, .maximize = true})},
      {"rmsprop", plain<RMSprop>(RMSpropOptions{.lr = 0.01})},
      {"rmsprop_centered_momentum_wd",
       plain<RMSprop>(
           RMSpropOptions{.lr = 0.01, .alpha = 0.9, .weight_decay = 0.05, .momentum = 0.8, .centered = true})},
      {"rmsprop_momentum_maximize", plain<RMSprop>(RMSpropOptions{.lr = 0.005, .momentum = 0.9, .maximize = true})},
      {"rmsprop_centered", plain<RMSprop>(RMSpropOptions{.lr = 0.01, .centered = true})},
      {"adagrad", plain<Adagrad>(AdagradOptions{.lr = 0.1})},
      {"adagrad_options", plain<Adagrad>(AdagradOptions{
                              .lr = 0.1, .lr_decay = 0.01, .weight_decay = 0.05, .initial_accumulator_value = 0.1,
                              .eps = 1e-8})},
      {"adagrad_maximize", plain<Adagrad>(AdagradOptions{.lr = 0.05, .maximize = true})},
  };
  return c;
}

void train_step(Optimizer& opt, const Problem& pb) {
  opt.zero_grad();
  pb.loss().backward();
  opt.step();
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at element " << i;
}

// Runs every case for 20 steps and compares each step with PyTorch.
void check_trajectories(ScalarType dtype, bool strided, double tol) {
  for (const auto& [name, make] : cases()) {
    const auto& golden = optim_golden().opt.at(name);
    ASSERT_EQ(golden.size(), 20u) << name;
    Problem pb(dtype, strided);
    auto opt = make(pb.W, pb.b);
    for (int step = 1; step <= 20; ++step) {
      train_step(*opt, pb);
      expect_close(pb.values(), golden[step - 1], tol, fmt::format("{} step {}", name, step));
    }
  }
}

}  // namespace

TEST(OptimTrajectory, EveryCaseHasGoldenData) {
  EXPECT_EQ(optim_golden().opt.size(), cases().size());
  for (const auto& [name, make] : cases()) EXPECT_TRUE(optim_golden().opt.count(name)) << name;
}

TEST(OptimTrajectory, FusedFloat64MatchesPyTorch) { check_trajectories(kFloat64, false, 1e-9); }

TEST(OptimTrajectory, ReferencePathFloat64MatchesPyTorch) {
  // Transposed parameters are not contiguous, so every update takes the tensor-op path.
  check_trajectories(kFloat64, true, 1e-9);
}

TEST(OptimTrajectory, FusedFloat32MatchesPyTorch) { check_trajectories(kFloat32, false, 2e-4); }

TEST(OptimFused, Float32LoopsMatchTensorOpReference) {
  // Same float32 inputs through the fused loop and the reference, many elements
  // (several threads' chunks), a few steps with changing gradients.
  const int64_t n = 40003;  // above the grain: several chunks
  Tensor p0 = sin(arange(n).to(kFloat32) * 0.01f);
  auto grad_at = [&](int k) { return cos(arange(n).to(kFloat32) * (0.02f + 0.01f * k)); };
  auto run = [&](auto&& update) {
    Tensor p = p0.clone();
    for (int k = 0; k < 4; ++k) update(p, grad_at(k));
    return p;
  };
  auto expect_same = [](const Tensor& a, const Tensor& b, const char* what) {
    EXPECT_TRUE(allclose(a, b, 1e-5, 1e-6)) << what << ": max diff " << amax(abs(a - b)).item<double>();
  };
  for (bool wd : {false, true}) {
    SGDOptions so{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = wd ? 0.01 : 0.0, .nesterov = false};
    Tensor b1, b2;
    expect_same(run([&](Tensor& p, const Tensor& g) { sgd_update(p, g, b1, so); }),
                run([&](Tensor& p, const Tensor& g) { optim::detail::sgd_update_reference(p, g, b2, so); }), "sgd");
    for (bool decoupled : {false, true}) {
      AdamOptions ao{.lr = 0.01, .weight_decay = wd ? 0.1 : 0.0, .amsgrad = true};
      AdamState s1, s2;
      expect_same(run([&](Tensor& p, const Tensor& g) { adam_update(p, g, s1, ao, decoupled); }),
                  run([&](Tensor& p, const Tensor& g) {
                    if (!s2.step.defined()) s2 = AdamState::init(p, true);
                    optim::detail::adam_update_reference(p, g, s2, ao, decoupled);
                  }),
                  "adam");
    }
    RMSpropOptions ro{.lr = 0.01, .weight_decay = wd ? 0.05 : 0.0, .momentum = 0.5, .centered = true};
    RMSpropState r1, r2;
    expect_same(run([&](Tensor& p, const Tensor& g) { rmsprop_update(p, g, r1, ro); }),
                run([&](Tensor& p, const Tensor& g) {
                  if (!r2.step.defined()) r2 = RMSpropState::init(p, ro);
                  optim::detail::rmsprop_update_reference(p, g, r2, ro);
                }),
                "rmsprop");
    AdagradOptions go{.lr = 0.1, .lr_decay = 0.01, .weight_decay = wd ? 0.05 : 0.0};
    AdagradState a1, a2;
    expect_same(run([&](Tensor& p, const Tensor& g) { adagrad_update(p, g, a1, go); }),
                run([&](Tensor& p, const Tensor& g) {
                  if (!a2.step.defined()) a2 = AdagradState::init(p, go);
                  optim::detail::adagrad_update_reference(p, g, a2, go);
                }),
                "adagrad");
  }
}

TEST(OptimStateDict, ResumeFromFlatStateEqualsUninterruptedRun) {
  for (const auto& [name, make] : cases()) {
    Problem full;
    auto opt_full = make(full.W, full.b);
    for (int i = 0; i < 20; ++i) train_step(*opt_full, full);

    Problem first;
    auto opt_first = make(first.W, first.b);
    for (int i = 0; i < 10; ++i) train_step(*opt_first, first);
    // The checkpoint: parameters and optimizer state, flattened as in a safetensors file.
    Tensor W10 = first.W.detach().clone(), b10 = first.b.detach().clone();
    OptimizerStateDict sd = opt_first->state_dict();
    std::map<std::string, Tensor> tensors = sd.tensors("optim.");
    OptionMap metadata = sd.metadata("optim.");
    // Keep stepping the first run: the snapshot must not move with it.
    train_step(*opt_first, first);

    Problem resumed;
    {
      NoGradGuard no_grad;
      resumed.W.copy_(W10);
      resumed.b.copy_(b10);
    }
    auto opt_resumed = make(resumed.W, resumed.b);
    opt_resumed->load_state_dict(OptimizerStateDict::from_flat(tensors, metadata, "optim."));
    for (int i = 0; i < 10; ++i) train_step(*opt_resumed, resumed);
    EXPECT_EQ(resumed.values(), full.values()) << name << ": resumed run differs from the uninterrupted one";
  }
}

TEST(OptimStateDict, LayoutMatchesPyTorch) {
  Problem pb;
  Adam adam({pb.W, pb.b}, AdamOptions{.lr = 0.01, .amsgrad = true});
  train_step(adam, pb);
  train_step(adam, pb);
  OptimizerStateDict sd = adam.state_dict();
  ASSERT_EQ(sd.state.size(), 2u);
  EXPECT_EQ(sd.state.at(0).at("step").item<double>(), 2.0);
  EXPECT_EQ(sd.state.at(0).at("step").dtype(), kFloat32);
  EXPECT_EQ(sd.state.at(1).at("exp_avg").sizes().vec(), std::vector<int64_t>{3});
  EXPECT_TRUE(sd.state.at(0).count("max_exp_avg_sq"));
  ASSERT_EQ(sd.param_groups.size(), 1u);
  EXPECT_EQ(sd.param_groups[0].params, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(sd.param_groups[0].options.at("lr"), 0.01);
  EXPECT_EQ(sd.param_groups[0].options.at("beta2"), 0.999);
  auto tensors = sd.tensors();
  EXPECT_TRUE(tensors.count("state.0.exp_avg"));
  EXPECT_TRUE(tensors.count("state.1.step"));
  auto meta = sd.metadata();
  EXPECT_EQ(meta.at("param_groups.0.amsgrad"), 1.0);
  EXPECT_EQ(meta.at("param_groups.0.num_params"), 2.0);
  // Adagrad holds state from construction, as in PyTorch.
  Adagrad adagrad({pb.W}, AdagradOptions{.initial_accumulator_value = 0.5});
  auto asd = adagrad.state_dict();
  ASSERT_EQ(asd.state.size(), 1u);
  EXPECT_EQ(asd.state.at(0).at("sum").to_vector<double>(), std::vector<double>(12, 0.5));
  // SGD without momentum keeps no state.
  SGD sgd({pb.W}, SGDOptions{.lr = 0.1});
  train_step(sgd, pb);
  EXPECT_TRUE(sgd.state_dict().state.empty());
}

TEST(OptimStateDict, LoadChecksGroupsAndShapes) {
  Problem pb;
  Adam a({pb.W, pb.b});
  train_step(a, pb);
  OptimizerStateDict sd = a.state_dict();
  Problem other;
  Adam one_param({other.W});
  expect_error([&] { one_param.load_state_dict(sd); }, {"doesn't match the size of optimizer's group"});
  Adam swapped({other.b, other.W});
  expect_error([&] { swapped.load_state_dict(sd); }, {"state 'exp_avg'", "shape"});
}

TEST(OptimParamGroups, PerGroupOptionsAndAddParamGroup) {
  Problem pb;
  SGD sgd({pb.W}, SGDOptions{.lr = 0.1, .momentum = 0.5});
  sgd.add_param_group({{pb.b}, {{"lr", 0.01}}});
  ASSERT_EQ(sgd.param_groups().size(), 2u);
  EXPECT_EQ(sgd.param_groups()[1].lr(), 0.01);
  EXPECT_EQ(sgd.param_groups()[1].get("momentum"), 0.5);  // filled from defaults
  expect_error([&] { sgd.add_param_group({{pb.W}, {}}); }, {"more than one parameter group"});
  // One step moves b by lr 0.01 * grad.
  pb.loss().backward();
  Tensor b0 = pb.b.detach().clone(), gb = pb.b.grad().clone();
  sgd.step();
  EXPECT_TRUE(allclose(pb.b.detach(), b0 - gb * 0.01, 1e-12, 1e-14));
}

TEST(OptimStep, ClosureRecomputesLossAndMatchesPyTorch) {
  Problem pb;
  SGD sgd({pb.W, pb.b}, SGDOptions{.lr = 0.1});
  const auto& golden = optim_golden().opt.at("sgd");
  for (int step = 1; step <= 20; ++step) {
    Tensor loss = sgd.step([&] {
      sgd.zero_grad();
      Tensor l = pb.loss();
      l.backward();
      return l;
    });
    ASSERT_TRUE(loss.defined());
    EXPECT_FALSE(pb.W.grad().requires_grad());
    expect_close(pb.values(), golden[step - 1], 1e-9, fmt::format("closure step {}", step));
  }
}

TEST(OptimStep, UpdatesRecordNoHistoryAndSkipParamsWithoutGrad) {
  Problem pb;
  Adam adam({pb.W, pb.b});
  pb.loss().backward();
  pb.b.set_grad(Tensor());
  Tensor b0 = pb.b.detach().clone();
  adam.step();
  EXPECT_TRUE(pb.W.is_leaf());
  EXPECT_TRUE(pb.W.requires_grad());
  EXPECT_EQ(pb.b.to_vector<double>(), b0.to_vector<double>());
  EXPECT_EQ(adam.find_state(pb.b), nullptr);
  EXPECT_NE(adam.find_state(pb.W), nullptr);
}

TEST(OptimZeroGrad, SetToNoneOrZeroInPlace) {
  Problem pb;
  SGD sgd({pb.W, pb.b}, SGDOptions{.lr = 0.1});
  pb.loss().backward();
  Tensor g = pb.W.grad();
  sgd.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(pb.W.grad().defined());
  EXPECT_TRUE(pb.W.grad().is_same(g));  // same tensor, zeroed in place
  EXPECT_EQ(g.to_vector<double>(), std::vector<double>(12, 0.0));
  pb.loss().backward();
  sgd.zero_grad();
  EXPECT_FALSE(pb.W.grad().defined());
  EXPECT_FALSE(pb.b.grad().defined());
  sgd.zero_grad();  // no grads: nothing to do
}

TEST(OptimErrors, ClearMessages) {
  Problem pb;
  expect_error([&] { SGD({pb.W}, SGDOptions{}); }, {"required optimization parameter lr"});
  expect_error([&] { SGD({pb.W}, SGDOptions{.lr = 0.1, .nesterov = true}); }, {"Nesterov momentum requires"});
  expect_error([&] { SGD({pb.W}, SGDOptions{.lr = -1}); }, {"invalid learning rate: -1"});
  expect_error([&] { Adam({pb.W}, AdamOptions{.beta2 = 1.0}); }, {"beta parameter at index 1"});
  expect_error([&] { Adam({pb.W * 2}); }, {"non-leaf"});
  expect_error([&] { Adam({pb.W, pb.W}); }, {"more than one parameter group"});
  expect_error([&] { Adam(std::vector<Tensor>{}); }, {"empty parameter list"});
  expect_error([&] { Adam({arange(3)}); }, {"floating-point"});
  expect_error([&] { pb.W.requires_grad_(); ParamGroup g{{pb.W}, {}}; (void)g.get("lr"); }, {"no option 'lr'"});
}

TEST(OptimAdamW, DefaultsFollowPyTorch) {
  Problem pb;
  AdamW w({pb.W});
  EXPECT_EQ(w.defaults().at("weight_decay"), 1e-2);
  EXPECT_EQ(w.defaults().at("lr"), 1e-3);
  EXPECT_STREQ(w.name(), "AdamW");
  Adam a({pb.b});
  EXPECT_EQ(a.defaults().at("weight_decay"), 0.0);
  EXPECT_EQ(a.defaults().at("eps"), 1e-8);
  RMSprop r({pb.W});
  EXPECT_EQ(r.defaults().at("alpha"), 0.99);
  EXPECT_EQ(r.defaults().at("lr"), 1e-2);
  Adagrad g({pb.b});
  EXPECT_EQ(g.defaults().at("eps"), 1e-10);
}

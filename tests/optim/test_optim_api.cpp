// PyTorch's spellings of optimizers: optim::Adam(params, lr), and the state
// saved and loaded in one call each (optim::save / optim::load), options
// bit for bit.
#include <filesystem>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;

namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ember_optim_api_" + name)).string();
}

// Two steps of a quadratic loss, so that every state tensor is non-zero.
void take_steps(optim::Optimizer& opt, const std::vector<Tensor>& params, int steps) {
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor loss = zeros({});
    for (const Tensor& p : params) loss = loss + (p * p * 3 - p).sum();
    loss.backward();
    opt.step();
  }
}

std::vector<Tensor> fresh_params() {
  return {arange(6).reshape({2, 3}).to(kFloat32).requires_grad_(), tensor<float>({0.5, -1}).requires_grad_()};
}

}  // namespace

TEST(OptimApi, LearningRateAsTheSecondArgument) {
  std::vector<Tensor> params = fresh_params();
  optim::Adam adam(params, 3e-4);
  EXPECT_EQ(adam.param_groups()[0].lr(), 3e-4);
  EXPECT_EQ(adam.param_groups()[0].get("eps"), 1e-8);
  EXPECT_EQ(adam.param_groups()[0].get("beta2"), 0.999);
  optim::Adam defaults(fresh_params(), {});  // {} is still the default options
  EXPECT_EQ(defaults.param_groups()[0].lr(), 1e-3);
  optim::AdamW adamw(fresh_params(), 2e-3);
  EXPECT_EQ(adamw.param_groups()[0].lr(), 2e-3);
  EXPECT_EQ(adamw.param_groups()[0].get("weight_decay"), 1e-2);
  optim::SGD sgd(fresh_params(), 0.1);
  EXPECT_EQ(sgd.param_groups()[0].lr(), 0.1);
  EXPECT_EQ(sgd.param_groups()[0].get("momentum"), 0.0);
}

TEST(OptimApi, SaveAndLoadRoundTripOptionsAndStateExactly) {
  std::vector<Tensor> a = fresh_params();
  optim::Adam opt(a, optim::AdamOptions{.lr = 3e-4, .beta1 = 0.85, .eps = 1e-8, .weight_decay = 0.1,
                                        .amsgrad = true});
  opt.param_groups()[0].set_lr(1.0 / 3.0);  // no short decimal form
  take_steps(opt, a, 2);
  const std::string path = temp_file("adam.safetensors");
  optim::save(opt, path);

  // Another optimizer over equal parameters, built with other options.
  std::vector<Tensor> b = fresh_params();
  {
    NoGradGuard ng;
    for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
  }
  optim::Adam restored(b, optim::AdamOptions{.lr = 0.1, .eps = 1e-3});
  optim::load(restored, path);
  const optim::OptionMap& want = opt.param_groups()[0].options;
  const optim::OptionMap& got = restored.param_groups()[0].options;
  EXPECT_EQ(got, want);  // every double equal, eps = 1e-8 and lr = 1/3 included
  EXPECT_EQ(got.at("eps"), 1e-8);
  EXPECT_EQ(got.at("lr"), 1.0 / 3.0);
  // The state is equal too: one more step moves both alike.
  take_steps(opt, a, 1);
  take_steps(restored, b, 1);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].to_vector<float>(), b[i].to_vector<float>()) << i;

  // The state dict form: optim::save(opt.state_dict(), path).
  const std::string dict_path = temp_file("adam_dict.safetensors");
  optim::save(opt.state_dict(), dict_path);
  optim::OptimizerStateDict sd = optim::load_state_dict(dict_path);
  EXPECT_EQ(sd.param_groups.at(0).options, opt.param_groups()[0].options);
  ASSERT_EQ(sd.state.size(), 2u);
  EXPECT_EQ(sd.state.at(1).at("exp_avg_sq").to_vector<float>(),
            opt.state_dict().state.at(1).at("exp_avg_sq").to_vector<float>());

  // Another kind of optimizer, or not an optimizer file: errors naming both.
  optim::SGD sgd(fresh_params(), 0.1);
  expect_error([&] { optim::load(sgd, path); }, {path.c_str(), "state of Adam, not of SGD"});
  const std::string weights = temp_file("weights.safetensors");
  nn::Linear lin(2, 2);
  nn::save(lin, weights);
  expect_error([&] { optim::load_state_dict(weights); }, {weights.c_str(), "not an optimizer state file"});
  for (const std::string& p : {path, dict_path, weights}) std::filesystem::remove(p);
}

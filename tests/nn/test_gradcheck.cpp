// gradcheck (float64 finite differences) through every layer and loss:
// input and parameter gradients.
#include "ember/autograd/gradcheck.h"
#include "nn/reference.h"

using namespace ember;
using namespace ember::testing;
using autograd::gradcheck;

namespace {
// gradcheck of m.forward over (input, parameters...).
void check_module(nn::Module& m, const Tensor& input, bool input_grad = true) {
  m.to(kFloat64);
  std::vector<Tensor> params = m.parameters();
  Tensor in = input.is_floating_point() ? input.to(kFloat64).detach() : input;
  variable_list inputs{in.requires_grad_(input_grad && in.is_floating_point())};
  for (Tensor& p : params) inputs.push_back(p);
  gradcheck(
      [&](const variable_list& xs) {
        // Parameters are the same tensors; gradcheck perturbs them in place.
        return variable_list{m.forward(xs[0])};
      },
      inputs);
}
}  // namespace

TEST(NnGradcheck, Layers) {
  manual_seed(3);
  Tensor x = randn({3, 4}, kFloat64);
  { nn::Linear m(4, 3); check_module(m, x); }
  { nn::LeakyReLU m(0.1); check_module(m, x); }
  { nn::GELU m("tanh"); check_module(m, x); }
  { nn::GELU m; check_module(m, x); }
  { nn::SiLU m; check_module(m, x); }
  { nn::Sigmoid m; check_module(m, x); }
  { nn::Tanh m; check_module(m, x); }
  { nn::Softmax m(1); check_module(m, x); }
  { nn::LogSoftmax m(0); check_module(m, x); }
  { nn::Softplus m(1.5, 2); check_module(m, x * 3); }
  { nn::ELU m(0.5); check_module(m, x); }
  { nn::BatchNorm1d m(4); check_module(m, x); }
  { nn::BatchNorm2d m(2); check_module(m, randn({2, 2, 3, 3}, kFloat64)); }
  { nn::BatchNorm1d m(4); m.eval(); check_module(m, x); }
  { nn::LayerNorm m({4}); check_module(m, x); }
  { nn::GroupNorm m(2, 4); check_module(m, randn({2, 4, 3}, kFloat64)); }
  // Without padding_idx: its row deliberately gets no gradient (checked in test_layers).
  { nn::Embedding m(6, 3); check_module(m, tensor<int64_t>({0, 2, 5, 2}), false); }
  { nn::Flatten m; check_module(m, randn({2, 3, 2}, kFloat64)); }
  {
    // Dropout redraws its mask per call, so finite differences only make
    // sense in eval (identity); training gradients are checked in test_layers.
    nn::Dropout m(0.4);
    m.eval();
    check_module(m, x);
  }
  {
    nn::Bilinear m(3, 2, 2);
    m.to(kFloat64);
    variable_list in{randn({4, 3}, kFloat64).requires_grad_(), randn({4, 2}, kFloat64).requires_grad_(), m.weight,
                     m.bias};
    gradcheck([&](const variable_list& xs) { return variable_list{m.forward(xs[0], xs[1])}; }, in);
  }
}

TEST(NnGradcheck, Losses) {
  namespace F = ember::nn::functional;
  manual_seed(4);
  Tensor logits = randn({5, 4}, kFloat64).requires_grad_();
  Tensor tgt = tensor<int64_t>({0, 3, 1, 1, 2});
  Tensor w = tensor<double>({0.5, 2.0, 1.0, 1.5});
  auto one = [](Tensor t) { return variable_list{t}; };
  gradcheck([&](const variable_list& x) {
    return one(F::cross_entropy(x[0], tgt, {.weight = w, .ignore_index = 1, .label_smoothing = 0.1}));
  }, {logits});
  Tensor probs = softmax(randn({5, 4}, kFloat64), 1);
  gradcheck([&](const variable_list& x) { return one(F::cross_entropy(x[0], probs, {.label_smoothing = 0.3})); },
            {logits});
  gradcheck([&](const variable_list& x) { return one(F::nll_loss(x[0], tgt, {.weight = w})); }, {logits});
  Tensor p = (rand({3, 4}, kFloat64) * 0.8 + 0.1).requires_grad_();
  Tensor bt = rand({3, 4}, kFloat64);
  gradcheck([&](const variable_list& x) { return one(F::binary_cross_entropy(x[0], bt)); }, {p});
  gradcheck([&](const variable_list& x) {
    return one(F::binary_cross_entropy_with_logits(x[0], bt, {.pos_weight = tensor<double>({1, 2, 3, 4})}));
  }, {logits.detach().narrow(0, 0, 3).clone().requires_grad_()});
  Tensor a = randn({3, 4}, kFloat64).requires_grad_(), b = randn({3, 4}, kFloat64).requires_grad_();
  gradcheck([](const variable_list& x) { return variable_list{F::mse_loss(x[0], x[1])}; }, {a, b});
  gradcheck([](const variable_list& x) { return variable_list{F::l1_loss(x[0], x[1])}; }, {a, b});
  gradcheck([](const variable_list& x) { return variable_list{F::smooth_l1_loss(x[0], x[1], "sum", 0.7)}; }, {a, b});
  gradcheck([](const variable_list& x) { return variable_list{F::huber_loss(x[0], x[1], "mean", 0.6)}; }, {a, b});
  Tensor q = softmax(randn({3, 4}, kFloat64), 1).requires_grad_();
  gradcheck([](const variable_list& x) {
    return variable_list{F::kl_div(x[0], x[1], {.reduction = "batchmean"})};
  }, {log_softmax(a, 1).detach().requires_grad_(), q});
}

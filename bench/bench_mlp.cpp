// W2: MLP 784-256-256-10 (ReLU), batch 32, SGD(lr 0.01, momentum 0.9) on 16
// cycled random batches: train steps/s (forward + loss + backward + step +
// zero_grad), 200 warm-up steps, 5 repeats of 2000 steps — the same work as
// ../shared/anchors/w2_mlp_steps.py.
//
// With --manual it also times the same step with autograd off (NoGradGuard
// forward keeping activations, hand-written backward with mm/sum): the gap
// is what autograd bookkeeping costs (issue 3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_util.h"
#include "ember/ember.h"

using namespace ember;

using bench::seconds;
using bench::stat;
using bench::Stat;

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  bool manual = argc > 2 && std::strcmp(argv[2], "--manual") == 0;
  set_num_threads(threads);
  manual_seed(0);
  auto l1 = std::make_shared<nn::Linear>(784, 256), l2 = std::make_shared<nn::Linear>(256, 256),
       l3 = std::make_shared<nn::Linear>(256, 10);
  nn::Sequential model({l1, std::make_shared<nn::ReLU>(), l2, std::make_shared<nn::ReLU>(), l3});
  optim::SGD opt(model.parameters(), {.lr = 0.01, .momentum = 0.9});
  const int nb = 16, steps = 2000, reps = 5;
  Tensor xs = randn({nb, 32, 784}), ys = randint(0, 10, {nb, 32});

  auto autograd_step = [&](int i) {
    Tensor loss = nn::functional::cross_entropy(model.forward(xs[i % nb]), ys[i % nb]);
    loss.backward();
    opt.step();
    opt.zero_grad();
  };
  // Same math, autograd off: forward keeps what backward needs, backward is
  // written out (softmax - onehot, relu masks, mm for weight grads).
  auto manual_step = [&](int i) {
    NoGradGuard no_grad;
    Tensor x = xs[i % nb], y = ys[i % nb];
    Tensor h1 = linear(x, l1->weight, l1->bias), a1 = relu(h1);
    Tensor h2 = linear(a1, l2->weight, l2->bias), a2 = relu(h2);
    Tensor logits = linear(a2, l3->weight, l3->bias);
    Tensor g3 = (softmax(logits, 1) - one_hot(y, 10).to(kFloat32)) / 32.0;
    l3->weight.set_grad(mm(g3.t(), a2));
    l3->bias.set_grad(g3.sum({0}));
    Tensor g2 = where(gt(h2, 0.0), mm(g3, l3->weight), zeros({}));
    l2->weight.set_grad(mm(g2.t(), a1));
    l2->bias.set_grad(g2.sum({0}));
    Tensor g1 = where(gt(h1, 0.0), mm(g2, l2->weight), zeros({}));
    l1->weight.set_grad(mm(g1.t(), x));
    l1->bias.set_grad(g1.sum({0}));
    opt.step();
    opt.zero_grad();
  };

  auto measure = [&](auto&& step) {
    for (int i = 0; i < 200; ++i) step(i);
    std::vector<double> rates;
    for (int r = 0; r < reps; ++r) {
      double t0 = seconds();
      for (int i = 0; i < steps; ++i) step(i);
      rates.push_back(steps / (seconds() - t0));
    }
    return stat(rates);
  };
  Stat a = measure(autograd_step);
  std::printf("{\"workload\": \"w2_mlp_steps_ember\", \"threads\": %d, \"steps_per_s\": {\"median\": %.1f, "
              "\"min\": %.1f, \"max\": %.1f}",
              threads, a.med, a.mn, a.mx);
  if (manual) {
    Stat m = measure(manual_step);
    std::printf(", \"manual_backward_steps_per_s\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f}, "
                "\"autograd_overhead_pct\": %.1f",
                m.med, m.mn, m.mx, 100.0 * (m.med / a.med - 1.0));
  }
  std::printf("}\n");
  return 0;
}

// Gradients of small programs against PyTorch 1.13 (values printed by
// tests/data/gen_autograd.py, which builds the same closed-form inputs).
#include "ember/autograd/autograd.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_values;

namespace {
Tensor sin_arange(int64_t n, double scale) { return sin(arange(n).to(kFloat64) * scale); }
Tensor cos_arange(int64_t n, double scale) { return cos(arange(n).to(kFloat64) * scale); }
}  // namespace

TEST(AutogradPrograms, TwoLayerMlpMatchesPyTorch) {
  Tensor x = sin_arange(12, 0.7).view({4, 3});
  Tensor w1 = (cos_arange(15, 0.3).view({5, 3}) * 0.5).requires_grad_();
  Tensor b1 = (arange(5).to(kFloat64) * 0.1 - 0.2).requires_grad_();
  Tensor w2 = (sin_arange(10, 0.9).view({2, 5}) * 0.4).requires_grad_();
  Tensor b2 = tensor<double>({0.05, -0.1}).requires_grad_();
  Tensor y = cos_arange(8, 1.0).view({4, 2});
  Tensor h = relu(matmul(x, w1.t()) + b1);
  Tensor out = matmul(h, w2.t()) + b2;
  Tensor loss = pow(out - y, 2).mean();
  loss.backward();
  EXPECT_NEAR(loss.item<double>(), 0.6878243611472883, 1e-12);
  expect_values(w1.grad(), {5, 3},
                {-0.059530699170752745, 0.09952634568339547, 0.21177459502059331, -0.012126783575513922,
                 -0.00031959302676423315, 0.01163790711625147, -0.08175173940253178, -0.09215172392893009,
                 -0.05921131278114665, -0.06726296711594268, -0.07581977364162473, -0.04871735590700744,
                 -0.0018709223069319787, -0.0021089302463885356, -0.0013550753380244666},
                1e-10, 1e-12);
  expect_values(b1.grad(), {5},
                {0.11831029953395619, -0.007635404908773957, 0.09379762722883286, 0.0771739752812042,
                 0.00214659742290791},
                1e-10, 1e-12);
  expect_values(w2.grad(), {2, 5},
                {-0.20527476890402968, 0.003675332775340297, 0.13845311915806502, 0.3085425484053121,
                 0.2632061364943614, -0.2084481124086432, 0.012304544875897362, 0.0663782301371412,
                 0.1479237767244973, 0.12618825497015035},
                1e-10, 1e-12);
  expect_values(b2.grad(), {2}, {-0.08404860632592598, -0.18808031081293852}, 1e-10, 1e-12);
  // Same MLP through linear() (the fused path nn::Linear uses).
  for (Tensor* p : {&w1, &b1, &w2, &b2}) p->set_grad(Tensor());
  Tensor out2 = linear(relu(linear(x, w1, b1)), w2, b2);
  pow(out2 - y, 2).mean().backward();
  expect_values(b2.grad(), {2}, {-0.08404860632592598, -0.18808031081293852}, 1e-10, 1e-12);
  EXPECT_NEAR(w1.grad().to_vector<double>()[2], 0.21177459502059331, 1e-12);
}

TEST(AutogradPrograms, SoftmaxCrossEntropyFromPrimitives) {
  Tensor logits = (sin_arange(12, 1.3).view({3, 4}) * 2).requires_grad_();
  Tensor target = tensor<int64_t>({0, 3, 1});
  Tensor logp = logits - logsumexp(logits, {1}, true);
  Tensor ce = neg(logp.gather(1, target.view({3, 1})).mean());
  ce.backward();
  EXPECT_NEAR(ce.item<double>(), 2.6555951880720174, 1e-12);
  expect_values(logits.grad(), {3, 4},
                {-0.3028257722994712, 0.2095769398248242, 0.08553941802924672, 0.0077094144454002735,
                 0.0051921630863439065, 0.04672594966097793, 0.22388810419029395, -0.27580621693761576,
                 0.0064155623414424694, -0.32601478184008836, 0.07784453264376062, 0.24175468685488527},
                1e-10, 1e-12);
  // log_softmax gives the same gradient.
  Tensor l2 = logits.detach().clone().requires_grad_();
  neg(log_softmax(l2, 1).gather(1, target.view({3, 1})).mean()).backward();
  EXPECT_TRUE(allclose(l2.grad(), logits.grad(), 1e-10, 1e-12));
}

TEST(AutogradPrograms, DataDependentLoop) {
  Tensor v = tensor<double>({0.5, 1.0, 1.5}).requires_grad_();
  Tensor h = v;
  int steps = 0;
  while (h.sum().item<double>() < 10) {
    h = h * 1.5 + 0.1;
    ++steps;
  }
  (h * h).sum().backward();
  EXPECT_EQ(steps, 3);
  expect_values(v.grad(), {3}, {14.596875, 25.987500000000004, 37.378125000000004}, 1e-12, 1e-12);
}

// Engine behaviour: accumulation, no-grad, retain_graph, version checks,
// in-place rules, hooks, anomaly mode, deep graphs, custom functions.
#include "ember/autograd/autograd.h"
#include "ember/autograd/function.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

TEST(AutogradEngine, LeafFlagsAndGradFnNames) {
  Tensor x = tensor<float>({1, 2, 3});
  EXPECT_FALSE(x.requires_grad());
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  Tensor y = x * 2;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_STREQ(y.grad_fn()->name(), "MulBackward1");
  EXPECT_STREQ((x * x).grad_fn()->name(), "MulBackward0");
  EXPECT_STREQ(x.exp().sum().grad_fn()->name(), "SumBackward1");
  EXPECT_EQ(x.grad_fn(), nullptr);
  EXPECT_NE(y.str().find("grad_fn=<MulBackward1>"), std::string::npos);
  expect_error([&] { y.requires_grad_(false); }, {"only change requires_grad flags of leaf variables"});
  expect_error([] { (void)arange(3).requires_grad_(); }, {"floating point dtype can require gradients"});
}

TEST(AutogradEngine, GradientsAccumulateAcrossBackwardCalls) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  (x * x).sum().backward();
  (x * 3).sum().backward();
  expect_values(x.grad(), {2}, {5, 7});
  x.set_grad(Tensor());  // zero_grad(set_to_none=True)
  (x * x).sum().backward();
  expect_values(x.grad(), {2}, {2, 4});
  // Several paths into one tensor are summed.
  Tensor z = tensor<double>({3}).requires_grad_();
  Tensor a = z * 2, b = z * z;
  (a + b + z).backward();
  expect_values(z.grad(), {1}, {2 + 6 + 1});
}

TEST(AutogradEngine, NoGradRecordsNothing) {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard guard;
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      EnableGradGuard enable;
      EXPECT_TRUE((x * 2).requires_grad());
    }
  }
  {
    InferenceModeGuard inference;
    EXPECT_FALSE((x + 1).requires_grad());
    EXPECT_TRUE(InferenceMode::is_enabled());
  }
  EXPECT_TRUE((x * 2).requires_grad());
  EXPECT_FALSE(x.detach().requires_grad());
  EXPECT_EQ(x.detach().storage().get(), x.storage().get());
}

TEST(AutogradEngine, RetainGraphAndSecondBackward) {
  Tensor x = tensor<double>({2}).requires_grad_();
  Tensor y = x * x;
  y.backward(Tensor(), true);
  y.backward();
  expect_values(x.grad(), {1}, {8});
  expect_error([&] { y.backward(); }, {"Trying to backward through the graph a second time", "retain_graph=true"});
  expect_error([] { (tensor<float>({1, 2}).requires_grad_() * 2).backward(); },
               {"grad can be implicitly created only for scalar outputs"});
  expect_error([] { tensor<float>({1}).backward(); }, {"does not require grad"});
}

TEST(AutogradEngine, AutogradGradDoesNotTouchLeaves) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor w = tensor<double>({3, 4}).requires_grad_();
  Tensor y = (x * w).sum();
  auto g = autograd::grad({y}, {x});
  expect_values(g[0], {2}, {3, 4});
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  Tensor unused = tensor<double>({1}).requires_grad_();
  expect_error([&] { (void)autograd::grad({(x * 2).sum()}, {unused}); }, {"appears to not have been used"});
  auto g2 = autograd::grad({(x * 2).sum()}, {unused}, {}, std::nullopt, false, true);
  EXPECT_FALSE(g2[0].defined());
  // create_graph: a gradient penalty.
  Tensor gx = autograd::grad({(x * x * x).sum()}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(gx.requires_grad());
  gx.sum().backward();
  expect_values(x.grad(), {2}, {6, 12});  // d/dx sum(3x^2)
}

TEST(AutogradEngine, VersionCounterErrorNamesOpAndVersions) {
  Tensor a = tensor<float>({1, 2, 3}).requires_grad_();
  Tensor b = a.exp();
  Tensor c = b * 2;
  Tensor d = b.exp();  // saves its output d and input b? exp saves its output
  Tensor e = b.sin();  // sin saves its input b
  b.add_(1);           // b is now at version 1
  expect_error([&] { e.sum().backward(); },
               {"modified by an inplace operation", "[float32 [3]]", "output 0 of ExpBackward0",
                "is at version 1; expected version 0 instead", "Hint"});
  (void)c;
  (void)d;
}

TEST(AutogradEngine, InPlaceRules) {
  Tensor leaf = ones({2}).requires_grad_();
  expect_error([&] { leaf.add_(1); }, {"add_", "a leaf Variable that requires grad is being used in an in-place operation"});
  {
    NoGradGuard g;
    leaf.add_(1);  // allowed (optimizer updates)
  }
  expect_values(leaf, {2}, {2, 2});
  // In-place on a non-leaf rebases its history: gradient is still right.
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor y = x * 3;
  y.mul_(y);  // y = (3x)^2
  y.relu_();
  y.sum().backward();
  expect_values(x.grad(), {2}, {18, 36});
  // In-place with a grad-requiring operand on a plain buffer.
  Tensor w = tensor<double>({2, 5}).requires_grad_();
  Tensor buf = zeros({2}, kFloat64);
  buf.add_(w * w);
  buf.sum().backward();
  expect_values(w.grad(), {2}, {4, 10});
  // Views of tensors that require grad: a clear error, never a wrong gradient.
  Tensor z = tensor<double>({1, 2, 3}).requires_grad_() * 1;
  Tensor v = z.narrow(0, 0, 2);
  expect_error([&] { v.mul_(2); }, {"in-place operation on a view", "clone()"});
  Tensor base = zeros({3}, kFloat64);
  Tensor view = base.narrow(0, 1, 2);
  expect_error([&] { view.add_(w); }, {"shares storage"});
  // A view used after its base changed in place.
  Tensor q = tensor<double>({1, 2}).requires_grad_() * 2;
  Tensor qv = q.view({2, 1});
  q.add_(1);
  expect_error([&] { (void)(qv * 2); }, {"view of a tensor that requires grad", "modified in-place"});
}

TEST(AutogradEngine, HooksAndRetainGrad) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor y = x * 2;
  y.retain_grad();
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = g.to_vector<double>();
    return g * 10;  // replaces the gradient flowing on
  });
  x.register_hook([](const Tensor& g) { return g + 1; });
  (y * y).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{4, 8}));
  expect_values(y.grad(), {2}, {4, 8});
  expect_values(x.grad(), {2}, {81, 161});  // (2 * 2y * 10) + 1
  EXPECT_TRUE(y.retains_grad());
}

TEST(AutogradEngine, AnomalyModeNamesTheForwardOp) {
  Tensor x = tensor<double>({0.0, 1.0}).requires_grad_();
  Tensor y = sqrt(x);  // d sqrt/dx = inf at 0
  {
    DetectAnomalyGuard anomaly;
    expect_error([&] { y.sum().backward(Tensor(), true); },
                 {"Function 'SqrtBackward0' returned nan or inf values in its 0th output", "'Sqrt'"});
  }
  y.sum().backward();  // without anomaly mode: inf in the gradient, no error
  EXPECT_TRUE(std::isinf(x.grad().to_vector<double>()[0]));
}

TEST(AutogradEngine, DeepChainDoesNotOverflowTheStack) {
  Tensor x = ones({1}).requires_grad_();
  Tensor y = zeros({1});
  for (int i = 0; i < 100000; ++i) y = y + x;
  y.backward();
  EXPECT_EQ(x.grad().item<float>(), 100000.0f);
  y = Tensor();  // frees the 100,000-node graph iteratively
}

namespace {
struct Cube : autograd::Function<Cube> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double scale) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return x * x * x * scale;
  }
  static variable_list backward(autograd::AutogradContext* ctx, const variable_list& g) {
    Tensor x = ctx->get_saved_variables()[0];
    double scale = std::any_cast<double>(ctx->saved_data["scale"]);
    return {g[0] * x * x * (3 * scale)};
  }
};
}  // namespace

TEST(AutogradEngine, CustomFunction) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor y = Cube::apply(x, 0.5);
  EXPECT_TRUE(y.requires_grad());
  expect_values(y, {2}, {0.5, 4});
  y.sum().backward();
  expect_values(x.grad(), {2}, {1.5, 6});
  EXPECT_FALSE(Cube::apply(tensor<double>({1.0}), 1.0).requires_grad());
}

// Note [inline autograd meta]: the metadata is built inside the TensorImpl,
// and survives the tensor's later use as an input to many ops.
TEST(AutogradEngine, AutogradMetaLivesInsideTheTensor) {
  Tensor x = ones({3});
  EXPECT_EQ(autograd_meta(x), nullptr);  // never touched autograd
  x.requires_grad_();
  auto* meta = reinterpret_cast<const char*>(autograd_meta(x));
  auto* impl = reinterpret_cast<const char*>(x.impl());
  ASSERT_NE(meta, nullptr);
  EXPECT_GE(meta, impl);
  EXPECT_LE(meta + sizeof(AutogradMeta), impl + sizeof(TensorImpl));
  Tensor y = x * 2;
  EXPECT_STREQ(y.grad_fn()->name(), "MulBackward1");  // LibTorch's name for mul(Tensor, Scalar)
  y.sum().backward();
  expect_values(x.grad(), {3}, {2, 2, 2});
}

// Nodes keep two edges inline and move to the heap for more; broadcasting
// inputs keep their shape (and dtype) for the gradient. Values: d/dx_i of
// sum(cat(x0, x1, x2) * w) is w's slice i; d/db of sum(a + b) with b [1] is
// a.numel(); float64 b's gradient stays float64.
TEST(AutogradEngine, ManyInputsAndBroadcastGradients) {
  std::vector<Tensor> xs;
  for (int i = 0; i < 5; ++i) xs.push_back(full({2}, static_cast<double>(i), TensorOptions(kFloat64)).requires_grad_());
  Tensor w = tensor<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  (cat(xs, 0) * w).sum().backward();
  for (int i = 0; i < 5; ++i) expect_values(xs[i].grad(), {2}, {2.0 * i + 1, 2.0 * i + 2});
  EXPECT_EQ(xs[0].grad_fn(), nullptr);

  Tensor a = ones({2, 3}).requires_grad_();
  Tensor b = tensor<double>({0.5}).requires_grad_();
  (a + b).sum().backward();
  expect_values(a.grad(), {2, 3}, {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(b.grad().dtype(), kFloat64);
  expect_values(b.grad(), {1}, {6});
  Tensor c = zeros({2, 1}).requires_grad_();
  (a - c).sum().backward();
  expect_values(c.grad(), {2, 1}, {-3, -3});
}

// The activation modules of issue 20: PyTorch's constructor arguments,
// parameter names and repr (the strings are PyTorch 1.13's repr of the same
// constructions), and that forward is the functional op.
// Built into test_op_db beside the entries it complements (its natural home
// is tests/nn/; moving it there is a git mv).
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;

TEST(ActivationModules, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::Threshold(0.1, 20).repr(), "Threshold(threshold=0.1, value=20.0)");
  EXPECT_EQ(nn::Threshold(0.5, -1, true).repr(), "Threshold(threshold=0.5, value=-1.0, inplace=True)");
  EXPECT_EQ(nn::Hardtanh().repr(), "Hardtanh(min_val=-1.0, max_val=1.0)");
  EXPECT_EQ(nn::Hardtanh(-2, 0.5, true).repr(), "Hardtanh(min_val=-2.0, max_val=0.5, inplace=True)");
  EXPECT_EQ(nn::ReLU6().repr(), "ReLU6()");
  EXPECT_EQ(nn::ReLU6(true).repr(), "ReLU6(inplace=True)");
  EXPECT_EQ(nn::Hardsigmoid().repr(), "Hardsigmoid()");
  EXPECT_EQ(nn::Hardswish().repr(), "Hardswish()");
  EXPECT_EQ(nn::SELU().repr(), "SELU()");
  EXPECT_EQ(nn::SELU(true).repr(), "SELU(inplace=True)");
  EXPECT_EQ(nn::CELU().repr(), "CELU(alpha=1.0)");
  EXPECT_EQ(nn::CELU(0.5, true).repr(), "CELU(alpha=0.5, inplace=True)");
  EXPECT_EQ(nn::PReLU().repr(), "PReLU(num_parameters=1)");
  EXPECT_EQ(nn::PReLU(3, 0.1).repr(), "PReLU(num_parameters=3)");
  EXPECT_EQ(nn::RReLU().repr(), "RReLU(lower=0.125, upper=0.3333333333333333)");
  EXPECT_EQ(nn::RReLU(0.1, 0.3, true).repr(), "RReLU(lower=0.1, upper=0.3, inplace=True)");
  EXPECT_EQ(nn::GLU().repr(), "GLU(dim=-1)");
  EXPECT_EQ(nn::GLU(1).repr(), "GLU(dim=1)");
  EXPECT_EQ(nn::LogSigmoid().repr(), "LogSigmoid()");
  EXPECT_EQ(nn::Hardshrink().repr(), "Hardshrink(0.5)");
  EXPECT_EQ(nn::Softshrink(1.5).repr(), "Softshrink(1.5)");
  EXPECT_EQ(nn::Tanhshrink().repr(), "Tanhshrink()");
  EXPECT_EQ(nn::Softsign().repr(), "Softsign()");
  EXPECT_EQ(nn::Mish().repr(), "Mish()");
  EXPECT_EQ(nn::Softmin(1).repr(), "Softmin(dim=1)");
}

TEST(ActivationModules, PReLUHasOneWeightPerChannel) {
  nn::PReLU m(3, 0.1);
  auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params.begin()->first, "weight");
  ember::testing::expect_values(m.weight, {3}, {0.1, 0.1, 0.1});
  Tensor x = tensor<float>({-1, 2, -3, 4, -5, 6}).reshape({1, 3, 2});
  ember::testing::expect_values(m.forward(x), {1, 3, 2}, {-0.1, 2, -0.3, 4, -0.5, 6});
  Tensor y = m.forward(x).sum();
  y.backward();
  // d/dw_c = sum of the channel's non-positive inputs.
  ember::testing::expect_values(m.weight.grad(), {3}, {-1, -3, -5});
  ember::testing::expect_error([&] { m.forward(zeros({2, 4})); }, {"prelu", "4"});
}

TEST(ActivationModules, ForwardIsTheFunctional) {
  Tensor x = tensor<float>({-4, -2.5, -0.5, 0.25, 1, 3.5, 7});
  EXPECT_TRUE(equal(nn::Hardtanh(-2, 0.5)(x), hardtanh(x, -2, 0.5)));
  EXPECT_TRUE(equal(nn::ReLU6()(x), relu6(x)));
  ember::testing::expect_values(nn::ReLU6()(x), {7}, {0, 0, 0, 0.25, 1, 3.5, 6});
  EXPECT_TRUE(equal(nn::Threshold(0.5, -9)(x), threshold(x, 0.5, -9)));
  EXPECT_TRUE(equal(nn::Hardsigmoid()(x), hardsigmoid(x)));
  EXPECT_TRUE(equal(nn::Hardswish()(x), hardswish(x)));
  EXPECT_TRUE(equal(nn::SELU()(x), selu(x)));
  EXPECT_TRUE(equal(nn::CELU(0.5)(x), celu(x, 0.5)));
  EXPECT_TRUE(equal(nn::LogSigmoid()(x), logsigmoid(x)));
  EXPECT_TRUE(equal(nn::Hardshrink(1)(x), hardshrink(x, 1)));
  EXPECT_TRUE(equal(nn::Softshrink(1)(x), softshrink(x, 1)));
  EXPECT_TRUE(equal(nn::Tanhshrink()(x), tanhshrink(x)));
  EXPECT_TRUE(equal(nn::Softsign()(x), softsign(x)));
  EXPECT_TRUE(equal(nn::Mish()(x), mish(x)));
  Tensor m = tensor<float>({1, -2, 3, 0.5, 4, -1}).reshape({2, 3});
  EXPECT_TRUE(equal(nn::Softmin(1)(m), softmin(m, 1)));
  EXPECT_TRUE(equal(nn::GLU(0)(m), glu(m, 0)));
}

TEST(ActivationModules, InplaceWritesTheInput) {
  Tensor x = tensor<float>({-3, 0.5, 8});
  Tensor y = nn::ReLU6(true)(x);
  ember::testing::expect_values(x, {3}, {0, 0.5, 6});
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  Tensor z = tensor<float>({-3, 0.5, 8});
  nn::Hardtanh(-1, 1, false)(z);
  ember::testing::expect_values(z, {3}, {-3, 0.5, 8});
}

TEST(ActivationModules, RReLUTrainsWithRandomSlopesAndEvaluatesWithTheMean) {
  nn::RReLU m(0.1, 0.3);
  Tensor x = full({20000}, -1.0f);
  Tensor train = m(x);
  double lo = -train.max().item().to_double(), hi = -train.min().item().to_double();
  EXPECT_GE(lo, 0.1);
  EXPECT_LE(hi, 0.3);
  // Slopes ~ U(0.1, 0.3): mean 0.2, standard error 0.2/sqrt(12 * 20000) ~ 4e-4.
  EXPECT_NEAR(-train.mean().item().to_double(), 0.2, 3e-3);
  m.eval();
  ember::testing::expect_values(m(tensor<float>({-1, 2})), {2}, {-0.2, 2});
}

TEST(ActivationModules, ConstructorsCheckTheirArguments) {
  ember::testing::expect_error([] { nn::Hardtanh(1, -1); }, {"Hardtanh", "max_val"});
  ember::testing::expect_error([] { nn::PReLU(0); }, {"PReLU", "num_parameters"});
}

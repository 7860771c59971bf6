// PyTorch's spellings on modules: std::cout << model (the repr),
// model->to(device), nn::utils::clip_grad_norm_.
#include <sstream>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

std::shared_ptr<nn::Sequential> small_model() {
  return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(4, 2), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(2, 1, false)});
}

}  // namespace

TEST(ModuleApi, StreamsPrintThePyTorchRepr) {
  auto model = small_model();
  const std::string want =
      "Sequential(\n"
      "  (0): Linear(in_features=4, out_features=2, bias=True)\n"
      "  (1): ReLU()\n"
      "  (2): Linear(in_features=2, out_features=1, bias=False)\n"
      ")";
  std::ostringstream by_pointer, by_reference;
  by_pointer << model;  // the module, not the shared_ptr's address
  by_reference << *model;
  EXPECT_EQ(by_pointer.str(), want);
  EXPECT_EQ(by_reference.str(), want);
  std::ostringstream none;
  none << std::shared_ptr<nn::Linear>();
  EXPECT_EQ(none.str(), "None");
}

TEST(ModuleApi, ToDeviceMovesEveryTensorOrNamesTheDevice) {
  auto model = small_model();
  Tensor w0 = model->parameters()[0];
  nn::Module& same = model->to(kCPU);
  EXPECT_EQ(&same, model.get());
  // Already there: the parameters are the same tensors (optimizers holding
  // them stay valid), still leaves that require grad.
  EXPECT_TRUE(model->parameters()[0].is_same(w0));
  for (const Tensor& p : model->parameters()) {
    EXPECT_TRUE(p.device().is_cpu());
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  model->to(Device("cpu"));
  EXPECT_TRUE(model->parameters()[0].is_same(w0));
  if (!cuda_is_available()) {
    expect_error([&] { model->to(Device("cuda:1")); }, {"cuda:1", "without CUDA support"});
  } else {
    model->to(Device("cuda:0"));
    for (const Tensor& p : model->parameters()) {
      EXPECT_TRUE(p.device().is_cuda());
      EXPECT_TRUE(p.is_leaf());
    }
  }
}

TEST(ModuleApi, ClipGradNormUnderNnUtilsReturnsTheTotalNorm) {
  nn::Linear lin(2, 1);
  {
    NoGradGuard ng;
    lin.weight.copy_(tensor<float>({1, 1}, {1, 2}));
    lin.bias.copy_(tensor<float>({0}));
  }
  // d(sum(W x + b))/dW = x = [3, 4], d/db = 1: total norm sqrt(9 + 16 + 1).
  lin.forward(tensor<float>({3, 4}, {1, 2})).sum().backward();
  Tensor norm = nn::utils::clip_grad_norm_(lin.parameters(), 1.0);
  EXPECT_NEAR(norm.item<double>(), std::sqrt(26.0), 1e-5);
  const double scale = 1.0 / (std::sqrt(26.0) + 1e-6);  // PyTorch's clip_coef
  expect_values(lin.weight.grad(), {1, 2}, {3 * scale, 4 * scale}, 1e-5);
  expect_values(lin.bias.grad(), {1}, {scale}, 1e-5);
  nn::utils::clip_grad_value_(lin.parameters(), 0.5);
  expect_values(lin.weight.grad(), {1, 2}, {0.5, 0.5}, 1e-5);
}

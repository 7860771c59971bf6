// Printing matches PyTorch's repr (strings from torch 1.13's repr() of the
// same tensors; "dtype=torch.X" is spelled "dtype=X" in Ember).
#include "test_util.h"

using namespace ember;

TEST(Print, MatchesTorchRepr) {
  EXPECT_EQ(arange(6).to(kFloat32).reshape({2, 3}).str(),
            "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
  EXPECT_EQ(tensor<float>({1.5f, -2.25f, 3.0f}).str(), "tensor([ 1.5000, -2.2500,  3.0000])");
  EXPECT_EQ(tensor<float>({1e-5f, 1.0f, 1e5f}).str(), "tensor([1.0000e-05, 1.0000e+00, 1.0000e+05])");
  EXPECT_EQ(tensor<int64_t>({1, -20, 300}).str(), "tensor([  1, -20, 300])");
  EXPECT_EQ(tensor<bool>({true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(tensor<double>({1.0, 2.5}).str(), "tensor([1.0000, 2.5000], dtype=float64)");
  EXPECT_EQ(arange(8, kInt32).reshape({2, 2, 2}).str(),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]], dtype=int32)");
  EXPECT_EQ(tensor<int16_t>({-32768, 7}).str(), "tensor([-32768,      7], dtype=int16)");
  EXPECT_EQ(scalar_tensor(3.5).str(), "tensor(3.5000)");
  EXPECT_EQ(zeros({0, 3}).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(tensor<float>({NAN, 1.0f, INFINITY}).str(), "tensor([nan, 1., inf])");
}

TEST(Print, SummarisesLargeTensorsAndWrapsLines) {
  EXPECT_EQ(arange(2000).to(kFloat32).str(),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(arange(3000).reshape({100, 30}).str(),
            "tensor([[   0,    1,    2,  ...,   27,   28,   29],\n"
            "        [  30,   31,   32,  ...,   57,   58,   59],\n"
            "        [  60,   61,   62,  ...,   87,   88,   89],\n"
            "        ...,\n"
            "        [2910, 2911, 2912,  ..., 2937, 2938, 2939],\n"
            "        [2940, 2941, 2942,  ..., 2967, 2968, 2969],\n"
            "        [2970, 2971, 2972,  ..., 2997, 2998, 2999]])");
  EXPECT_EQ((arange(30).to(kFloat32) / 7).str(),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
            "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
            "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
            "        3.8571, 4.0000, 4.1429])");
}

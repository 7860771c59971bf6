// Fold and Unfold (col2im / im2col as layers; torch.nn names and repr).
#pragma once

#include "ember/nn/conv.h"
#include "ember/nn/module.h"

namespace ember::nn {

// (N, C, H, W) -> (N, C * kH * kW, L).
class Unfold : public Module {
 public:
  Unfold(ExpandingArray<2> kernel_size, ExpandingArray<2> dilation = 1, ExpandingArray<2> padding = 0,
         ExpandingArray<2> stride = 1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<2> kernel_size, dilation, padding, stride;
};

// (N, C * kH * kW, L) -> (N, C, *output_size).
class Fold : public Module {
 public:
  Fold(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size, ExpandingArray<2> dilation = 1,
       ExpandingArray<2> padding = 0, ExpandingArray<2> stride = 1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<2> output_size, kernel_size, dilation, padding, stride;
};

}  // namespace ember::nn

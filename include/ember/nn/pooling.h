// Pooling layers: MaxPool1d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
// (torch.nn names, arguments and repr).
#pragma once

#include <optional>
#include <utility>

#include "ember/nn/conv.h"
#include "ember/nn/module.h"

namespace ember::nn {

// stride defaults to kernel_size (PyTorch's stride=None).
class MaxPool1d : public Module {
 public:
  MaxPool1d(ExpandingArray<1> kernel_size, std::optional<ExpandingArray<1>> stride = std::nullopt,
            ExpandingArray<1> padding = 0, ExpandingArray<1> dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<1> kernel_size, stride, padding, dilation;
  const bool ceil_mode;
};

class MaxPool2d : public Module {
 public:
  MaxPool2d(ExpandingArray<2> kernel_size, std::optional<ExpandingArray<2>> stride = std::nullopt,
            ExpandingArray<2> padding = 0, ExpandingArray<2> dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  // (values, indices), as with return_indices=True (for MaxUnpool).
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const ExpandingArray<2> kernel_size, stride, padding, dilation;
  const bool ceil_mode;
};

class AvgPool2d : public Module {
 public:
  AvgPool2d(ExpandingArray<2> kernel_size, std::optional<ExpandingArray<2>> stride = std::nullopt,
            ExpandingArray<2> padding = 0, bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<2> kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;
};

// Output [.., oH, oW] whatever the input size (window i covers
// [floor(i*H/oH), ceil((i+1)*H/oH))).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(ExpandingArray<2> output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<2> output_size;
};

}  // namespace ember::nn

// Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d (torch.nn names, arguments and repr).
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

class MaxPool3d : public Module {
 public:
  MaxPool3d(ExpandingArray<3> kernel_size, std::optional<ExpandingArray<3>> stride = std::nullopt,
            ExpandingArray<3> padding = 0, ExpandingArray<3> dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<3> kernel_size, stride, padding, dilation;
  const bool ceil_mode;
};

// PyTorch stores AvgPool1d's arguments as 1-tuples, so its repr prints "(3,)".
class AvgPool1d : public Module {
 public:
  AvgPool1d(ExpandingArray<1> kernel_size, std::optional<ExpandingArray<1>> stride = std::nullopt,
            ExpandingArray<1> padding = 0, bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<1> kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;
};

class AvgPool3d : public Module {
 public:
  AvgPool3d(ExpandingArray<3> kernel_size, std::optional<ExpandingArray<3>> stride = std::nullopt,
            ExpandingArray<3> padding = 0, bool ceil_mode = false, bool count_include_pad = true,
            std::optional<int64_t> divisor_override = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<3> kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;
  const std::optional<int64_t> divisor_override;
};

class AdaptiveAvgPool1d : public Module {
 public:
  explicit AdaptiveAvgPool1d(ExpandingArray<1> output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<1> output_size;
};

class AdaptiveAvgPool3d : public Module {
 public:
  explicit AdaptiveAvgPool3d(ExpandingArray<3> output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const ExpandingArray<3> output_size;
};

// return_indices: forward_with_indices gives (values, indices).
class AdaptiveMaxPool1d : public Module {
 public:
  explicit AdaptiveMaxPool1d(ExpandingArray<1> output_size);
  Tensor forward(const Tensor& input) override;
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const ExpandingArray<1> output_size;
};

class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(ExpandingArray<2> output_size);
  Tensor forward(const Tensor& input) override;
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const ExpandingArray<2> output_size;
};

}  // namespace ember::nn

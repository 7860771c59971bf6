// The pooling modules over the functional pools.
#include "ember/nn/pooling.h"

#include "ember/ops/nn_functional.h"
#include "ember/ops/resample.h"

namespace ember::nn {

MaxPool1d::MaxPool1d(ExpandingArray<1> kernel_size_, std::optional<ExpandingArray<1>> stride_,
                     ExpandingArray<1> padding_, ExpandingArray<1> dilation_, bool ceil_mode_)
    : Module("MaxPool1d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      dilation(dilation_),
      ceil_mode(ceil_mode_) {}

Tensor MaxPool1d::forward(const Tensor& input) {
  return max_pool1d(input, kernel_size.ref(), stride.ref(), padding.ref(), dilation.ref(), ceil_mode);
}

std::string MaxPool1d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", kernel_size.py(),
                     stride.py(), padding.py(), dilation.py(), py_bool(ceil_mode));
}

MaxPool2d::MaxPool2d(ExpandingArray<2> kernel_size_, std::optional<ExpandingArray<2>> stride_,
                     ExpandingArray<2> padding_, ExpandingArray<2> dilation_, bool ceil_mode_)
    : Module("MaxPool2d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      dilation(dilation_),
      ceil_mode(ceil_mode_) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, kernel_size.ref(), stride.ref(), padding.ref(), dilation.ref(), ceil_mode);
}

std::pair<Tensor, Tensor> MaxPool2d::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input, kernel_size.ref(), stride.ref(), padding.ref(), dilation.ref(), ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", kernel_size.py(),
                     stride.py(), padding.py(), dilation.py(), py_bool(ceil_mode));
}

AvgPool2d::AvgPool2d(ExpandingArray<2> kernel_size_, std::optional<ExpandingArray<2>> stride_,
                     ExpandingArray<2> padding_, bool ceil_mode_, bool count_include_pad_)
    : Module("AvgPool2d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      ceil_mode(ceil_mode_),
      count_include_pad(count_include_pad_) {}

Tensor AvgPool2d::forward(const Tensor& input) {
  return avg_pool2d(input, kernel_size.ref(), stride.ref(), padding.ref(), ceil_mode, count_include_pad);
}

std::string AvgPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", kernel_size.py(), stride.py(), padding.py());
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(ExpandingArray<2> output_size_)
    : Module("AdaptiveAvgPool2d"), output_size(output_size_) {}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size.ref()); }

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + output_size.py(); }

MaxPool3d::MaxPool3d(ExpandingArray<3> kernel_size_, std::optional<ExpandingArray<3>> stride_,
                     ExpandingArray<3> padding_, ExpandingArray<3> dilation_, bool ceil_mode_)
    : Module("MaxPool3d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      dilation(dilation_),
      ceil_mode(ceil_mode_) {}

Tensor MaxPool3d::forward(const Tensor& input) {
  return max_pool3d(input, kernel_size.ref(), stride.ref(), padding.ref(), dilation.ref(), ceil_mode);
}

std::string MaxPool3d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", kernel_size.py(),
                     stride.py(), padding.py(), dilation.py(), py_bool(ceil_mode));
}

AvgPool1d::AvgPool1d(ExpandingArray<1> kernel_size_, std::optional<ExpandingArray<1>> stride_,
                     ExpandingArray<1> padding_, bool ceil_mode_, bool count_include_pad_)
    : Module("AvgPool1d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      ceil_mode(ceil_mode_),
      count_include_pad(count_include_pad_) {}

Tensor AvgPool1d::forward(const Tensor& input) {
  return avg_pool1d(input, kernel_size.ref(), stride.ref(), padding.ref(), ceil_mode, count_include_pad);
}

std::string AvgPool1d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", py_tuple(kernel_size.ref()), py_tuple(stride.ref()),
                     py_tuple(padding.ref()));
}

AvgPool3d::AvgPool3d(ExpandingArray<3> kernel_size_, std::optional<ExpandingArray<3>> stride_,
                     ExpandingArray<3> padding_, bool ceil_mode_, bool count_include_pad_,
                     std::optional<int64_t> divisor_override_)
    : Module("AvgPool3d"),
      kernel_size(kernel_size_),
      stride(stride_.value_or(kernel_size_)),
      padding(padding_),
      ceil_mode(ceil_mode_),
      count_include_pad(count_include_pad_),
      divisor_override(divisor_override_) {}

Tensor AvgPool3d::forward(const Tensor& input) {
  return avg_pool3d(input, kernel_size.ref(), stride.ref(), padding.ref(), ceil_mode, count_include_pad,
                    divisor_override);
}

std::string AvgPool3d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", kernel_size.py(), stride.py(), padding.py());
}

AdaptiveAvgPool1d::AdaptiveAvgPool1d(ExpandingArray<1> output_size_)
    : Module("AdaptiveAvgPool1d"), output_size(output_size_) {}
Tensor AdaptiveAvgPool1d::forward(const Tensor& input) { return adaptive_avg_pool1d(input, output_size.ref()); }
std::string AdaptiveAvgPool1d::extra_repr() const { return "output_size=" + output_size.py(); }

AdaptiveAvgPool3d::AdaptiveAvgPool3d(ExpandingArray<3> output_size_)
    : Module("AdaptiveAvgPool3d"), output_size(output_size_) {}
Tensor AdaptiveAvgPool3d::forward(const Tensor& input) { return adaptive_avg_pool3d(input, output_size.ref()); }
std::string AdaptiveAvgPool3d::extra_repr() const { return "output_size=" + output_size.py(); }

AdaptiveMaxPool1d::AdaptiveMaxPool1d(ExpandingArray<1> output_size_)
    : Module("AdaptiveMaxPool1d"), output_size(output_size_) {}
Tensor AdaptiveMaxPool1d::forward(const Tensor& input) { return adaptive_max_pool1d(input, output_size.ref()); }
std::pair<Tensor, Tensor> AdaptiveMaxPool1d::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool1d_with_indices(input, output_size.ref());
}
std::string AdaptiveMaxPool1d::extra_repr() const { return "output_size=" + output_size.py(); }

AdaptiveMaxPool2d::AdaptiveMaxPool2d(ExpandingArray<2> output_size_)
    : Module("AdaptiveMaxPool2d"), output_size(output_size_) {}
Tensor AdaptiveMaxPool2d::forward(const Tensor& input) { return adaptive_max_pool2d(input, output_size.ref()); }
std::pair<Tensor, Tensor> AdaptiveMaxPool2d::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool2d_with_indices(input, output_size.ref());
}
std::string AdaptiveMaxPool2d::extra_repr() const { return "output_size=" + output_size.py(); }

}  // namespace ember::nn

// Conv1d, Conv2d and ConvTranspose2d over the functional convolutions.
#include "ember/nn/conv.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/nn_functional.h"

namespace ember::nn {
namespace {

template <size_t N>
std::vector<int64_t> vec(const ExpandingArray<N>& a) {
  return {a.values.begin(), a.values.end()};
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

}  // namespace

ConvNd::ConvNd(std::string type_name, int64_t in, int64_t out, std::vector<int64_t> kernel,
               std::vector<int64_t> stride_, std::vector<int64_t> padding_, std::string padding_string_,
               std::vector<int64_t> dilation_, std::vector<int64_t> output_padding_, int64_t groups_,
               bool transposed_, bool has_bias, std::string padding_mode_, ScalarType dtype)
    : Module(type_name),
      in_channels(in),
      out_channels(out),
      kernel_size(std::move(kernel)),
      stride(std::move(stride_)),
      padding(std::move(padding_)),
      dilation(std::move(dilation_)),
      output_padding(std::move(output_padding_)),
      padding_string(std::move(padding_string_)),
      padding_mode(std::move(padding_mode_)),
      groups(groups_),
      transposed(transposed_),
      weight([&]() -> Tensor& {
        EMBER_CHECK(groups_ > 0, "{}: groups must be a positive integer, got {}", type_name, groups_);
        EMBER_CHECK(in % groups_ == 0, "{}: in_channels must be divisible by groups, got in_channels={} and groups={}",
                    type_name, in, groups_);
        EMBER_CHECK(out % groups_ == 0,
                    "{}: out_channels must be divisible by groups, got out_channels={} and groups={}", type_name, out,
                    groups_);
        DimVector shape{transposed_ ? in : out, (transposed_ ? out : in) / groups_};
        for (int64_t k : kernel_size) shape.push_back(k);
        return register_parameter("weight", empty(shape, dtype));
      }()),
      bias(register_parameter("bias", has_bias ? empty({out}, dtype) : Tensor())) {
  EMBER_CHECK(padding_string != "same" || all_equal(stride, 1),
              "{}: padding='same' is not supported for strided convolutions", type_name);
  EMBER_CHECK(padding_mode == "zeros" || padding_mode == "reflect" || padding_mode == "replicate" ||
                  padding_mode == "circular",
              "{}: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', but got padding_mode='{}'",
              type_name, padding_mode);
  EMBER_CHECK(!transposed_ || padding_mode == "zeros",
              "{}: only \"zeros\" padding mode is supported, got padding_mode='{}'", type_name, padding_mode);
  reset_parameters();
}

void ConvNd::reset_parameters() {
  // PyTorch's _ConvNd.reset_parameters: fan_in from the weight as stored
  // (for transposed layers that is out_channels / groups * kernel area).
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

std::string ConvNd::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels, py_tuple(kernel_size),
                              py_tuple(stride));
  if (!padding_string.empty()) s += ", padding=" + padding_string;
  else if (!all_equal(padding, 0)) s += ", padding=" + py_tuple(padding);
  if (!all_equal(dilation, 1)) s += ", dilation=" + py_tuple(dilation);
  if (!all_equal(output_padding, 0)) s += ", output_padding=" + py_tuple(output_padding);
  if (groups != 1) s += fmt::format(", groups={}", groups);
  if (!bias.defined()) s += ", bias=False";
  if (padding_mode != "zeros") s += ", padding_mode=" + padding_mode;
  return s;
}

std::vector<int64_t> ConvNd::reversed_padding_repeated_twice() const {
  std::vector<int64_t> pads;
  for (size_t i = kernel_size.size(); i-- > 0;) {
    int64_t left = padding[i], right = padding[i];
    if (padding_string == "same") {  // PyTorch's split: the odd element goes right
      const int64_t total = dilation[i] * (kernel_size[i] - 1);
      left = total / 2;
      right = total - left;
    } else if (padding_string == "valid") {
      left = right = 0;
    }
    pads.push_back(left);
    pads.push_back(right);
  }
  return pads;
}

Tensor ConvNd::pad_input(const Tensor& input) const {
  const int64_t dims = static_cast<int64_t>(kernel_size.size());
  EMBER_CHECK(input.dim() == dims + 2 || input.dim() == dims + 1,
              "{}: expected {}-D (batched) or {}-D (unbatched) input, got [{}]", type_name(), dims + 2, dims + 1,
              fmt::join(input.sizes().vec(), ", "));
  return pad(input, reversed_padding_repeated_twice(), padding_mode);
}

Conv1d::Conv1d(int64_t in, int64_t out, ExpandingArray<1> kernel_size, ExpandingArray<1> stride,
               ConvPadding<1> padding, ExpandingArray<1> dilation, int64_t groups, bool bias, std::string padding_mode,
               ScalarType dtype)
    : ConvNd("Conv1d", in, out, vec(kernel_size), vec(stride), vec(padding.sizes), padding.mode, vec(dilation), {0},
             groups, false, bias, std::move(padding_mode), dtype) {}

Tensor Conv1d::forward(const Tensor& input) {
  if (padding_mode != "zeros") return conv1d(pad_input(input), weight, bias_or_none(), stride, {0}, dilation, groups);
  if (padding_string.empty())
    return conv1d(input, weight, bias_or_none(), stride, padding, dilation, groups);
  EMBER_CHECK(input.dim() == 3, "Conv1d: expected 3-D input (N, C, L), got [{}]", fmt::join(input.sizes().vec(), ", "));
  // String padding: a length-L signal is a 1 x L image.
  return conv2d_padding_mode(input.unsqueeze(2), weight.unsqueeze(2), bias_or_none(), {1, stride[0]}, padding_string,
                {1, dilation[0]}, groups)
      .squeeze(2);
}

Conv2d::Conv2d(int64_t in, int64_t out, ExpandingArray<2> kernel_size, ExpandingArray<2> stride,
               ConvPadding<2> padding, ExpandingArray<2> dilation, int64_t groups, bool bias, std::string padding_mode,
               ScalarType dtype)
    : ConvNd("Conv2d", in, out, vec(kernel_size), vec(stride), vec(padding.sizes), padding.mode, vec(dilation), {0, 0},
             groups, false, bias, std::move(padding_mode), dtype) {}

Tensor Conv2d::forward(const Tensor& input) {
  if (padding_mode != "zeros") return conv2d(pad_input(input), weight, bias_or_none(), stride, {0, 0}, dilation, groups);
  if (padding_string.empty()) return conv2d(input, weight, bias_or_none(), stride, padding, dilation, groups);
  return conv2d_padding_mode(input, weight, bias_or_none(), stride, padding_string, dilation, groups);
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, ExpandingArray<2> kernel_size, ExpandingArray<2> stride,
                                 ExpandingArray<2> padding, ExpandingArray<2> output_padding, int64_t groups,
                                 bool bias, ExpandingArray<2> dilation, std::string padding_mode,
                                 ScalarType dtype)
    : ConvNd("ConvTranspose2d", in, out, vec(kernel_size), vec(stride), vec(padding), "", vec(dilation),
             vec(output_padding), groups, true, bias, std::move(padding_mode), dtype) {}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return conv_transpose2d(input, weight, bias_or_none(), stride, padding, output_padding, groups, dilation);
}

Conv3d::Conv3d(int64_t in, int64_t out, ExpandingArray<3> kernel_size, ExpandingArray<3> stride,
               ConvPadding<3> padding, ExpandingArray<3> dilation, int64_t groups, bool bias, std::string padding_mode,
               ScalarType dtype)
    : ConvNd("Conv3d", in, out, vec(kernel_size), vec(stride), vec(padding.sizes), padding.mode, vec(dilation),
             {0, 0, 0}, groups, false, bias, std::move(padding_mode), dtype) {}

Tensor Conv3d::forward(const Tensor& input) {
  if (padding_mode != "zeros")
    return conv3d(pad_input(input), weight, bias_or_none(), stride, {0, 0, 0}, dilation, groups);
  if (padding_string.empty()) return conv3d(input, weight, bias_or_none(), stride, padding, dilation, groups);
  return conv3d_padding_mode(input, weight, bias_or_none(), stride, padding_string, dilation, groups);
}

ConvTranspose1d::ConvTranspose1d(int64_t in, int64_t out, ExpandingArray<1> kernel_size, ExpandingArray<1> stride,
                                 ExpandingArray<1> padding, ExpandingArray<1> output_padding, int64_t groups,
                                 bool bias, ExpandingArray<1> dilation, std::string padding_mode,
                                 ScalarType dtype)
    : ConvNd("ConvTranspose1d", in, out, vec(kernel_size), vec(stride), vec(padding), "", vec(dilation),
             vec(output_padding), groups, true, bias, std::move(padding_mode), dtype) {}

Tensor ConvTranspose1d::forward(const Tensor& input) {
  return conv_transpose1d(input, weight, bias_or_none(), stride, padding, output_padding, groups, dilation);
}

}  // namespace ember::nn

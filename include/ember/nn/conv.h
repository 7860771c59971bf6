// Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d (torch.nn names,
// arguments, initialisation, state_dict keys and repr).
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

// An int or a tuple of N ints, as Python's `3` or `(3, 1)` (libtorch's
// ExpandingArray). Remembers which, because pooling reprs print it as given.
template <size_t N>
struct ExpandingArray {
  std::array<int64_t, N> values{};
  bool scalar = true;
  ExpandingArray(int64_t v) { values.fill(v); }  // NOLINT
  // {k} repeats k, like a 1-tuple in PyTorch's _pair.
  ExpandingArray(std::initializer_list<int64_t> v) : scalar(false) {  // NOLINT
    EMBER_CHECK(v.size() == N || v.size() == 1, "expected 1 or {} values, got {}", N, v.size());
    if (v.size() == 1) values.fill(*v.begin());
    else std::copy(v.begin(), v.end(), values.begin());
  }
  IntArrayRef ref() const { return IntArrayRef(values.data(), N); }
  int64_t operator[](size_t i) const { return values[i]; }
  // Python's spelling: "3" for an int, "(3, 1)" for a tuple.
  std::string py() const { return scalar ? std::to_string(values[0]) : py_tuple(ref()); }
};

// Convolution padding: sizes, or "same" / "valid" (PyTorch's string forms).
// The string constructor takes literals only, so a literal 0 stays a size.
template <size_t N>
struct ConvPadding {
  ExpandingArray<N> sizes = ExpandingArray<N>(int64_t{0});
  std::string mode;  // empty for explicit sizes
  ConvPadding(int64_t v) : sizes(v) {}                               // NOLINT
  ConvPadding(std::initializer_list<int64_t> v) : sizes(v) {}        // NOLINT
  template <size_t M>
  ConvPadding(const char (&m)[M]) : mode(m) { check(); }             // NOLINT
  explicit ConvPadding(std::string m) : mode(std::move(m)) { check(); }

 private:
  void check() const {
    EMBER_CHECK(mode == "same" || mode == "valid",
                "Invalid padding string '{}', should be one of ['valid', 'same']", mode);
  }
};

// Shared by the convolution layers: geometry, parameters and PyTorch's
// initialisation (kaiming_uniform_(a=sqrt(5)) for the weight; the bias
// uniform in +-1/sqrt(fan_in)).
class ConvNd : public Module {
 public:
  std::string extra_repr() const override;
  void reset_parameters();
  // F.pad's sizes for a padding_mode other than "zeros" (PyTorch's
  // _reversed_padding_repeated_twice: last dim first, left then right).
  std::vector<int64_t> reversed_padding_repeated_twice() const;

  const int64_t in_channels, out_channels;
  const std::vector<int64_t> kernel_size, stride, padding, dilation, output_padding;
  const std::string padding_string;  // "", "same" or "valid" (PyTorch's padding given as a string)
  // How the border is padded: "zeros" (in the convolution), or "reflect",
  // "replicate", "circular" (F.pad first, then a convolution without padding).
  const std::string padding_mode;
  const int64_t groups;
  const bool transposed;
  Tensor& weight;
  Tensor& bias;  // undefined when bias = false

 protected:
  ConvNd(std::string type_name, int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         std::vector<int64_t> stride, std::vector<int64_t> padding, std::string padding_string,
         std::vector<int64_t> dilation, std::vector<int64_t> output_padding, int64_t groups, bool transposed,
         bool bias, std::string padding_mode, ScalarType dtype);
  // The non-zeros padding_mode's F.pad, then no padding in the convolution.
  Tensor pad_input(const Tensor& input) const;
  std::optional<Tensor> bias_or_none() const { return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt; }
};

// input [N, C_in, L] -> [N, C_out, L_out]; weight [C_out, C_in / groups, K].
class Conv1d : public ConvNd {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size, ExpandingArray<1> stride = 1,
         ConvPadding<1> padding = 0, ExpandingArray<1> dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros", ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
};

// input [N, C_in, H, W] -> [N, C_out, H_out, W_out]; weight [C_out, C_in / groups, kH, kW].
//   Conv2d(1, 32, 3, 1, 1)   Conv2d(64, 64, {3, 3}, 1, "same")
//   Conv2d(3, 16, 3, 1, 1, 1, 1, true, "reflect")
class Conv2d : public ConvNd {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size, ExpandingArray<2> stride = 1,
         ConvPadding<2> padding = 0, ExpandingArray<2> dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros", ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
};

// The gradient of Conv2d with respect to its input, as a layer (upsampling);
// weight [C_in, C_out / groups, kH, kW]. PyTorch's argument order.
class ConvTranspose2d : public ConvNd {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size,
                  ExpandingArray<2> stride = 1, ExpandingArray<2> padding = 0, ExpandingArray<2> output_padding = 0,
                  int64_t groups = 1, bool bias = true, ExpandingArray<2> dilation = 1,
                  std::string padding_mode = "zeros", ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
};

// input [N, C_in, D, H, W] -> [N, C_out, D_out, H_out, W_out]; weight
// [C_out, C_in / groups, kD, kH, kW].
class Conv3d : public ConvNd {
 public:
  Conv3d(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size, ExpandingArray<3> stride = 1,
         ConvPadding<3> padding = 0, ExpandingArray<3> dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros", ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
};

// ConvTranspose2d's 1-D form; weight [C_in, C_out / groups, K].
class ConvTranspose1d : public ConvNd {
 public:
  ConvTranspose1d(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size,
                  ExpandingArray<1> stride = 1, ExpandingArray<1> padding = 0, ExpandingArray<1> output_padding = 0,
                  int64_t groups = 1, bool bias = true, ExpandingArray<1> dilation = 1,
                  std::string padding_mode = "zeros", ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
};

}  // namespace ember::nn

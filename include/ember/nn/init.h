// nn::init: in-place weight initialisers with PyTorch's formulas and
// defaults (torch.nn.init). All run under NoGradGuard and draw from `gen`
// (the default generator when null); each returns its tensor.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember::nn::init {

// Recommended gain for a nonlinearity: "linear", "conv1d".."conv3d",
// "conv_transpose1d".."3d", "sigmoid" -> 1; "tanh" -> 5/3; "relu" -> sqrt(2);
// "leaky_relu" -> sqrt(2 / (1 + slope^2)) (slope = param, default 0.01);
// "selu" -> 3/4.
double calculate_gain(std::string_view nonlinearity, std::optional<double> param = std::nullopt);
// (fan_in, fan_out) = (size(1), size(0)) times the receptive field size.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double a = 0, double b = 1, Generator* gen = nullptr);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1, Generator* gen = nullptr);
// Normal(mean, std) restricted to [a, b] (inverse-CDF method, like PyTorch).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2,
                     Generator* gen = nullptr);
Tensor constant_(Tensor tensor, double val);
Tensor ones_(Tensor tensor);
Tensor zeros_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1, Generator* gen = nullptr);
Tensor xavier_normal_(Tensor tensor, double gain = 1, Generator* gen = nullptr);
// mode: "fan_in" or "fan_out"; a: the negative slope for "leaky_relu".
Tensor kaiming_uniform_(Tensor tensor, double a = 0, std::string_view mode = "fan_in",
                        std::string_view nonlinearity = "leaky_relu", Generator* gen = nullptr);
Tensor kaiming_normal_(Tensor tensor, double a = 0, std::string_view mode = "fan_in",
                       std::string_view nonlinearity = "leaky_relu", Generator* gen = nullptr);
// A (semi-)orthogonal matrix over the tensor flattened to [size(0), -1].
Tensor orthogonal_(Tensor tensor, double gain = 1, Generator* gen = nullptr);

}  // namespace ember::nn::init

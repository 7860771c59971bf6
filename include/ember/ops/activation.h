// Activations, dropout, embedding and normalisation with
// torch.nn.functional's names and defaults. Written as composites of
// differentiable ops, so autograd comes for free (fused kernels later, same
// names). relu, gelu, silu, sigmoid, tanh live in elementwise.h; softmax and
// log_softmax in reduction.h.
#pragma once

#include <optional>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

// x for x > 0, negative_slope * x otherwise (gradient at 0: negative_slope).
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// log(1 + exp(beta * x)) / beta, reverting to x where beta * x > threshold.
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
// x for x > 0, alpha * (exp(x) - 1) otherwise.
Tensor elu(const Tensor& x, double alpha = 1);

// Zeroes elements with probability p and scales the rest by 1 / (1 - p);
// identity when !training.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// Zeroes whole channels: input (N, C, *) — one draw per (n, c).
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);

// Rows of weight [num_embeddings, dim] picked by integer indices of any
// shape; result [*indices.shape, dim]. Positions equal to padding_idx pass
// no gradient to weight.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

// input (N, C, *). training: normalise with the batch's biased variance and
// (when running stats are given) update them in place with the unbiased one:
// running = (1 - momentum) * running + momentum * batch. Otherwise normalise
// with the running stats.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// Normalises over the trailing dims given by normalized_shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// input (N, C, *): normalises each of num_groups channel groups per sample;
// weight and bias are per channel.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

}  // namespace ember

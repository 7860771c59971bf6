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

// ---- more elementwise activations (torch.nn.functional's names/defaults) ----
// value where x <= threshold, else x.
Tensor threshold(const Tensor& x, double threshold, double value);
// clamp to [min_val, max_val]; the gradient is 1 strictly inside.
Tensor hardtanh(const Tensor& x, double min_val = -1, double max_val = 1);
Tensor relu6(const Tensor& x);  // hardtanh(x, 0, 6)
Tensor hardsigmoid(const Tensor& x);  // relu6(x + 3) / 6
Tensor hardswish(const Tensor& x);    // x * relu6(x + 3) / 6
// scale * elu(x, alpha) with the self-normalising constants.
Tensor selu(const Tensor& x);
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Tensor celu(const Tensor& x, double alpha = 1);
// x for x > 0, weight * x otherwise; weight has 1 or C (= x.size(1)) elements.
Tensor prelu(const Tensor& x, const Tensor& weight);
// Leaky ReLU whose negative slope is drawn from U(lower, upper) per element
// when training, and is (lower + upper) / 2 otherwise.
Tensor rrelu(const Tensor& x, double lower = 1.0 / 8, double upper = 1.0 / 3, bool training = false,
             Generator* gen = nullptr);
// a * sigmoid(b) for the two halves a, b of x along dim.
Tensor glu(const Tensor& x, int64_t dim = -1);
Tensor logsigmoid(const Tensor& x);  // log(sigmoid(x)), stable
Tensor hardshrink(const Tensor& x, double lambd = 0.5);  // 0 on [-lambd, lambd]
Tensor softshrink(const Tensor& x, double lambd = 0.5);  // x shrunk toward 0 by lambd
Tensor tanhshrink(const Tensor& x);  // x - tanh(x)
Tensor softsign(const Tensor& x);    // x / (1 + |x|)
Tensor mish(const Tensor& x);        // x * tanh(softplus(x))
// softmax(-x, dim), x cast to dtype first when given.
Tensor softmin(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// Softmax of (logits + Gumbel noise) / tau; hard: one-hot of the argmax in
// the forward pass with the soft sample's gradient (straight-through).
Tensor gumbel_softmax(const Tensor& logits, double tau = 1, bool hard = false, int64_t dim = -1,
                      Generator* gen = nullptr);
// In-place forms (torch.nn.functional's threshold_, hardtanh_, ...): the
// result is written into x, which is returned.
Tensor& threshold_(Tensor& x, double threshold, double value);
Tensor& hardtanh_(Tensor& x, double min_val = -1, double max_val = 1);
Tensor& elu_(Tensor& x, double alpha = 1);
Tensor& leaky_relu_(Tensor& x, double negative_slope = 0.01);
Tensor& celu_(Tensor& x, double alpha = 1);
Tensor& selu_(Tensor& x);
Tensor& rrelu_(Tensor& x, double lower = 1.0 / 8, double upper = 1.0 / 3, bool training = false,
               Generator* gen = nullptr);

// Zeroes elements with probability p and scales the rest by 1 / (1 - p);
// identity when !training.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// Zeroes whole channels: input (N, C, *) — one draw per (n, c).
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);

// Rows of weight [num_embeddings, dim] picked by integer indices of any
// shape; result [*indices.shape, dim]. Positions equal to padding_idx pass
// no gradient to weight. F.embedding's other arguments: max_norm renormalises
// the rows indices reach, in place, to at most max_norm in norm_type norm
// (embedding_renorm_) before the lookup; scale_grad_by_freq divides each row's
// gradient by how often indices hold it; sparse gradients are refused (Ember
// has no sparse tensors).
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2.0,
                 bool scale_grad_by_freq = false, bool sparse = false);
// torch.embedding_renorm_: each row of weight that indices name, whose
// norm_type norm exceeds max_norm, is scaled by max_norm / (norm + 1e-7).
// In place, without autograd; returns weight.
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type);

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

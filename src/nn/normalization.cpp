// BatchNorm, LayerNorm, GroupNorm modules (composites, see ops/activation.h).
#include "ember/nn/normalization.h"

#include "ember/core/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/ops/activation.h"
#include "ember/ops/factory.h"
#include "ember/ops/normalization.h"

namespace ember::nn {

namespace {
Tensor maybe(bool on, Tensor t) { return on ? std::move(t) : Tensor(); }
}  // namespace

// ---- BatchNorm ----

BatchNorm::BatchNorm(std::string type_name, int64_t n, double eps_, std::optional<double> momentum_, bool affine_,
                     bool track, ScalarType dtype)
    : Module(std::move(type_name)),
      num_features(n),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track),
      weight(register_parameter("weight", maybe(affine_, empty({n}, dtype)))),
      bias(register_parameter("bias", maybe(affine_, empty({n}, dtype)))),
      running_mean(register_buffer("running_mean", maybe(track, zeros({n}, dtype)))),
      running_var(register_buffer("running_var", maybe(track, ones({n}, dtype)))),
      num_batches_tracked(register_buffer("num_batches_tracked", maybe(track, zeros({}, kInt64)))) {
  reset_parameters();
}

void BatchNorm::reset_running_stats() {
  if (!track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard g;
  num_batches_tracked.zero_();
}

void BatchNorm::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm::forward(const Tensor& input) {
  check_input_dim(input);
  EMBER_CHECK(input.size(1) == num_features, "{}: expected input with {} channels (dim 1), got shape [{}]",
              type_name(), num_features, fmt::join(input.sizes().vec(), ", "));
  double factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats) {
    NoGradGuard g;
    num_batches_tracked.add_(1);
    if (!momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  bool use_batch_stats = is_training() || !track_running_stats;
  bool update = is_training() && track_running_stats;
  return batch_norm(input, update || !use_batch_stats ? running_mean : Tensor(),
                    update || !use_batch_stats ? running_var : Tensor(), weight, bias, use_batch_stats, factor, eps);
}

std::string BatchNorm::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features, py_float(eps),
                     momentum ? py_float(*momentum) : "None", py_bool(affine), py_bool(track_running_stats));
}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "BatchNorm1d: expected 2D or 3D input (got {}D input)",
              input.dim());
}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 4, "BatchNorm2d: expected 4D input (got {}D input)", input.dim());
}

void BatchNorm3d::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 5, "BatchNorm3d: expected 5D input (got {}D input)", input.dim());
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(std::vector<int64_t> shape, double eps_, bool affine, ScalarType dtype)
    : Module("LayerNorm"),
      normalized_shape(std::move(shape)),
      eps(eps_),
      elementwise_affine(affine),
      weight(register_parameter("weight", maybe(affine, empty(normalized_shape, dtype)))),
      bias(register_parameter("bias", maybe(affine, empty(normalized_shape, dtype)))) {
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (!elementwise_affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& input) { return layer_norm(input, normalized_shape, weight, bias, eps); }

std::string LayerNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", py_tuple(normalized_shape), py_float(eps),
                     py_bool(elementwise_affine));
}

// ---- GroupNorm ----

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps_, bool affine_, ScalarType dtype)
    : Module("GroupNorm"),
      num_groups(groups),
      num_channels(channels),
      eps(eps_),
      affine(affine_),
      weight(register_parameter("weight", maybe(affine_, empty({channels}, dtype)))),
      bias(register_parameter("bias", maybe(affine_, empty({channels}, dtype)))) {
  EMBER_CHECK(groups > 0 && channels % groups == 0,
              "GroupNorm: num_channels ({}) must be divisible by num_groups ({})", channels, groups);
  reset_parameters();
}

void GroupNorm::reset_parameters() {
  if (!affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 2 && input.size(1) == num_channels,
              "GroupNorm: expected input (N, {}, *), got shape [{}]", num_channels,
              fmt::join(input.sizes().vec(), ", "));
  return group_norm(input, num_groups, weight, bias, eps);
}

std::string GroupNorm::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", num_groups, num_channels, py_float(eps), py_bool(affine));
}

// ---- InstanceNorm ----

InstanceNorm::InstanceNorm(std::string type_name, int64_t spatial, int64_t n, double eps_, double momentum_,
                           bool affine_, bool track, ScalarType dtype)
    : Module(std::move(type_name)),
      spatial_dims(spatial),
      num_features(n),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track),
      weight(register_parameter("weight", maybe(affine_, empty({n}, dtype)))),
      bias(register_parameter("bias", maybe(affine_, empty({n}, dtype)))),
      running_mean(register_buffer("running_mean", maybe(track, zeros({n}, dtype)))),
      running_var(register_buffer("running_var", maybe(track, ones({n}, dtype)))),
      num_batches_tracked(register_buffer("num_batches_tracked", maybe(track, zeros({}, kInt64)))) {
  reset_parameters();
}

void InstanceNorm::reset_running_stats() {
  if (!track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard g;
  num_batches_tracked.zero_();
}

void InstanceNorm::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor InstanceNorm::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == spatial_dims + 1 || input.dim() == spatial_dims + 2,
              "{}: expected {}D (unbatched) or {}D (batched) input (got {}D input)", type_name(), spatial_dims + 1,
              spatial_dims + 2, input.dim());
  bool batched = input.dim() == spatial_dims + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  // PyTorch only warns when an affine-free layer sees another channel count.
  EMBER_CHECK(!affine || x.size(1) == num_features,
              "{}: expected input's size at dim={} to match num_features ({}), but got: {}.", type_name(),
              batched ? 1 : 0, num_features, x.size(1));
  Tensor out = instance_norm(x, running_mean, running_var, weight, bias, is_training() || !track_running_stats,
                             momentum, eps);
  return batched ? out : out.squeeze(0);
}

std::string InstanceNorm::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features, py_float(eps),
                     py_float(momentum), py_bool(affine), py_bool(track_running_stats));
}

// ---- LocalResponseNorm ----

LocalResponseNorm::LocalResponseNorm(int64_t size_, double alpha_, double beta_, double k_)
    : Module("LocalResponseNorm"), size(size_), alpha(alpha_), beta(beta_), k(k_) {}

Tensor LocalResponseNorm::forward(const Tensor& input) { return local_response_norm(input, size, alpha, beta, k); }

std::string LocalResponseNorm::extra_repr() const {
  return fmt::format("{}, alpha={}, beta={}, k={}", size, py_float(alpha), py_float(beta), py_float(k));
}

}  // namespace ember::nn

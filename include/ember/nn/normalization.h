// Normalisation layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm,
// GroupNorm, LocalResponseNorm.
#pragma once

#include <optional>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

// Shared by BatchNorm1d/2d. Buffers running_mean (zeros), running_var
// (ones), num_batches_tracked (int64 0) when track_running_stats; weight
// (ones) and bias (zeros) when affine. Training normalises with batch stats
// and updates the running ones (momentum = nullopt: cumulative average);
// eval uses the running stats.
class BatchNorm : public Module {
 public:
  BatchNorm(std::string type_name, int64_t num_features, double eps, std::optional<double> momentum, bool affine,
            bool track_running_stats, ScalarType dtype);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  void reset_parameters();

  const int64_t num_features;
  const double eps;
  const std::optional<double> momentum;
  const bool affine, track_running_stats;
  Tensor& weight;
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;

 protected:
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Input (N, C) or (N, C, L).
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, ScalarType dtype = kFloat32)
      : BatchNorm("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats, dtype) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input (N, C, H, W).
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, ScalarType dtype = kFloat32)
      : BatchNorm("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats, dtype) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input (N, C, D, H, W).
class BatchNorm3d : public BatchNorm {
 public:
  explicit BatchNorm3d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, ScalarType dtype = kFloat32)
      : BatchNorm("BatchNorm3d", num_features, eps, momentum, affine, track_running_stats, dtype) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Normalises over the trailing normalized_shape dims; weight (ones) and
// bias (zeros) of that shape when elementwise_affine.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const std::vector<int64_t> normalized_shape;
  const double eps;
  const bool elementwise_affine;
  Tensor& weight;
  Tensor& bias;
};

// Normalises channel groups of (N, C, *); per-channel weight and bias.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_groups, num_channels;
  const double eps;
  const bool affine;
  Tensor& weight;
  Tensor& bias;
};

// Shared by InstanceNorm1d/2d/3d: per-instance statistics (F.instance_norm).
// Defaults differ from BatchNorm's: affine = false, track_running_stats =
// false. With running stats, eval mode normalises with them. Unbatched input
// (one dim fewer) is a batch of one.
class InstanceNorm : public Module {
 public:
  InstanceNorm(std::string type_name, int64_t spatial_dims, int64_t num_features, double eps, double momentum,
               bool affine, bool track_running_stats, ScalarType dtype);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  void reset_parameters();

  const int64_t spatial_dims;
  const int64_t num_features;
  const double eps, momentum;
  const bool affine, track_running_stats;
  Tensor& weight;
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;
};

// Input (N, C, L) or (C, L).
class InstanceNorm1d : public InstanceNorm {
 public:
  explicit InstanceNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = false,
                          bool track_running_stats = false, ScalarType dtype = kFloat32)
      : InstanceNorm("InstanceNorm1d", 1, num_features, eps, momentum, affine, track_running_stats, dtype) {}
};

// Input (N, C, H, W) or (C, H, W).
class InstanceNorm2d : public InstanceNorm {
 public:
  explicit InstanceNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = false,
                          bool track_running_stats = false, ScalarType dtype = kFloat32)
      : InstanceNorm("InstanceNorm2d", 2, num_features, eps, momentum, affine, track_running_stats, dtype) {}
};

// Input (N, C, D, H, W) or (C, D, H, W).
class InstanceNorm3d : public InstanceNorm {
 public:
  explicit InstanceNorm3d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = false,
                          bool track_running_stats = false, ScalarType dtype = kFloat32)
      : InstanceNorm("InstanceNorm3d", 3, num_features, eps, momentum, affine, track_running_stats, dtype) {}
};

// F.local_response_norm over the channels of (N, C, *).
class LocalResponseNorm : public Module {
 public:
  explicit LocalResponseNorm(int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const int64_t size;
  const double alpha, beta, k;
};

}  // namespace ember::nn

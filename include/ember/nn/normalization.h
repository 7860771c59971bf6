// Normalisation layers: BatchNorm1d/2d, LayerNorm, GroupNorm.
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

}  // namespace ember::nn

// nn::SyncBatchNorm: BatchNorm whose training statistics are those of the
// global batch, over every rank of a ProcessGroup (torch.nn.SyncBatchNorm).
// With it, N ranks with batch B normalize like one process with batch N*B;
// plain BatchNorm under DistributedDataParallel normalizes per rank.
// Eval uses the running statistics, as BatchNorm does.
#pragma once

#include "ember/distributed/process_group.h"
#include "ember/nn/normalization.h"

namespace ember::nn {

class SyncBatchNorm : public BatchNorm {
 public:
  SyncBatchNorm(int64_t num_features, distributed::ProcessGroupPtr group, double eps = 1e-5,
                std::optional<double> momentum = 0.1, bool affine = true, bool track_running_stats = true,
                ScalarType dtype = kFloat32);
  Tensor forward(const Tensor& input) override;

 protected:
  void check_input_dim(const Tensor& input) const override;

 private:
  distributed::ProcessGroupPtr group_;
};

// Replaces every BatchNorm1d/2d in `module` (or `module` itself) by a
// SyncBatchNorm with the same parameters and buffers; returns the result
// (torch.nn.SyncBatchNorm.convert_sync_batchnorm).
ModulePtr convert_sync_batchnorm(ModulePtr module, const distributed::ProcessGroupPtr& group);

// Sum over ranks whose backward is the sum over ranks of the gradients
// (SyncBatchNorm's statistics go through it).
Tensor all_reduce_sum_differentiable(const Tensor& input, const distributed::ProcessGroupPtr& group);

}  // namespace ember::nn

// SyncBatchNorm: the batch mean and variance over every rank, written in
// differentiable tensor ops around a differentiable all-reduce, so autograd
// derives the backward (which all-reduces the statistics' gradients).
// Two passes (mean, then the centred sum of squares), like the one-process
// batch_norm, rather than E[x^2] - E[x]^2, which cancels badly.
#include "ember/distributed/sync_batch_norm.h"

#include "ember/autograd/function.h"
#include "ember/nn/container.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"

namespace ember::nn {
namespace {

struct AllReduceSum : autograd::Function<AllReduceSum> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const distributed::ProcessGroupPtr& group) {
    ctx->saved_data["group"] = group;
    Tensor out = x.contiguous().clone();
    group->all_reduce(out, distributed::ReduceOp::Sum);
    return out;
  }
  static variable_list backward(autograd::AutogradContext* ctx, const variable_list& grads) {
    auto group = std::any_cast<distributed::ProcessGroupPtr>(ctx->saved_data.at("group"));
    Tensor g = grads[0].contiguous().clone();
    group->all_reduce(g, distributed::ReduceOp::Sum);
    return {g};
  }
};

}  // namespace

Tensor all_reduce_sum_differentiable(const Tensor& input, const distributed::ProcessGroupPtr& group) {
  return AllReduceSum::apply(input, group);
}

SyncBatchNorm::SyncBatchNorm(int64_t num_features, distributed::ProcessGroupPtr group, double eps,
                             std::optional<double> momentum, bool affine, bool track_running_stats, ScalarType dtype)
    : BatchNorm("SyncBatchNorm", num_features, eps, momentum, affine, track_running_stats, dtype),
      group_(std::move(group)) {
  EMBER_CHECK(group_ != nullptr, "SyncBatchNorm: process group is null");
}

void SyncBatchNorm::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() >= 2, "SyncBatchNorm: expected at least 2D input (got {}D input)", input.dim());
}

Tensor SyncBatchNorm::forward(const Tensor& input) {
  if (!is_training() && track_running_stats) return BatchNorm::forward(input);
  check_input_dim(input);
  const int64_t C = num_features;
  EMBER_CHECK(input.size(1) == C, "SyncBatchNorm: expected input with {} channels (dim 1), got shape [{}]", C,
              fmt::join(input.sizes().vec(), ", "));
  std::vector<int64_t> dims = {0}, shape(static_cast<size_t>(input.dim()), 1);
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  shape[1] = C;
  const double local_count = static_cast<double>(input.numel() / C);
  // Sum and count in one message; the count carries no gradient.
  Tensor packed = cat({input.sum(dims), full({1}, local_count, input.dtype())});
  Tensor global = all_reduce_sum_differentiable(packed, group_);
  Tensor count = global.narrow(0, C, 1).detach();
  const double total = count.item<double>();
  EMBER_CHECK(total > 1, "SyncBatchNorm: expected more than 1 value per channel when training, got {} over all ranks",
              total);
  Tensor mean = global.narrow(0, 0, C) / total;
  Tensor centred = input - mean.view(shape);
  Tensor var = all_reduce_sum_differentiable((centred * centred).sum(dims), group_) / total;
  Tensor out = centred * (var + eps).rsqrt().view(shape);
  if (affine) out = out * weight.view(shape) + bias.view(shape);
  if (track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    double f = momentum ? *momentum : 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
    running_mean.mul_(1.0 - f).add_(mean.detach(), f);
    running_var.mul_(1.0 - f).add_(var.detach() * (total / (total - 1.0)), f);
  }
  return out;
}

ModulePtr convert_sync_batchnorm(ModulePtr module, const distributed::ProcessGroupPtr& group) {
  if (auto* bn = dynamic_cast<BatchNorm*>(module.get()); bn && !dynamic_cast<SyncBatchNorm*>(bn)) {
    auto sync = std::make_shared<SyncBatchNorm>(bn->num_features, group, bn->eps, bn->momentum, bn->affine,
                                                bn->track_running_stats, bn->running_mean.defined()
                                                                             ? bn->running_mean.dtype()
                                                                             : kFloat32);
    sync->load_state_dict(bn->state_dict());
    sync->train(bn->is_training());
    return sync;
  }
  NamedModules children = module->named_children();
  bool changed = false;
  for (auto& [name, child] : children) {
    ModulePtr converted = convert_sync_batchnorm(child, group);
    if (converted == child) continue;
    changed = true;
    // A Sequential runs its own copy of the child list, which replace_module
    // does not see: it is rebuilt below instead.
    if (!dynamic_cast<Sequential*>(module.get())) module->replace_module(name, converted);
    child = converted;
  }
  if (changed && dynamic_cast<Sequential*>(module.get())) {
    // Sequential subclasses (the zoo's CNN) only check shapes before
    // Sequential::forward: the rebuilt plain Sequential has the same keys
    // and computes the same function.
    auto rebuilt = std::make_shared<Sequential>(children);
    rebuilt->train(module->is_training());
    return rebuilt;
  }
  return module;
}

}  // namespace ember::nn

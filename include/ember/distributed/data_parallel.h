// nn::DistributedDataParallel: data-parallel training over a ProcessGroup
// (torch.nn.parallel.DistributedDataParallel).
//
//   auto pg = distributed::init_process_group("mpi");
//   auto ddp = std::make_shared<nn::DistributedDataParallel>(model, pg);
//   Tensor loss = loss_fn(ddp->forward(x), y);   // x: this rank's share
//   loss.backward();        // gradients averaged over ranks when it returns
//   opt.step();
//
// Construction broadcasts rank 0's parameters and buffers. Gradients go into
// buckets (reverse parameter order, the first bucket 1 MiB, the others
// 25 MiB); a bucket's allreduce starts from the gradient-accumulation hook
// of its last parameter, so communication overlaps the rest of backward, and
// the end of backward waits only for what is left. Buckets launch in the
// same order on every rank. See Note [gradient buckets] in the source.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember::nn {

struct DistributedDataParallelOptions {
  double bucket_cap_mb = 25.0;
  double first_bucket_cap_mb = 1.0;
  // Allow parameters that get no gradient in an iteration (a rank that did
  // not use one contributes zeros to the average, as in PyTorch; a
  // parameter no rank used keeps its grad()). Off: such a parameter raises
  // on every rank, naming it.
  bool find_unused_parameters = false;
  // Copy rank 0's buffers (BatchNorm running statistics) to every rank at
  // each forward, as PyTorch does; batch statistics stay per rank.
  bool broadcast_buffers = true;
};

// Timing of the last synchronized backward, for the overlap benchmark.
struct DistributedDataParallelStats {
  int64_t buckets = 0;
  double comm_s = 0;     // sum of the buckets' allreduce times
  double exposed_s = 0;  // waited for communication after backward's last node
  // Share of the allreduce time hidden behind backward: 1 - exposed / comm.
  double hidden_fraction() const { return comm_s > 0 ? std::max(0.0, 1.0 - exposed_s / comm_s) : 0.0; }
  // The backward timeline (steady_clock seconds): when each parameter's
  // gradient arrived (registration order; NaN: none) and when backward's
  // last node finished. docs/distributed.md's simulation replays it.
  std::vector<double> param_ready_s;
  double backward_end_s = 0;
};

class Reducer;

class DistributedDataParallel : public Module {
 public:
  using Options = DistributedDataParallelOptions;
  DistributedDataParallel(ModulePtr module, distributed::ProcessGroupPtr group, Options options = {});
  ~DistributedDataParallel() override;

  // Runs the wrapped module's forward and arms gradient synchronization for
  // the backward that follows.
  Tensor forward(const Tensor& input) override;
  // For modules with another forward signature: call this, then their
  // forward (the buffers broadcast and the arming forward() does).
  void prepare_forward();

  const ModulePtr& module() const { return module_; }
  const distributed::ProcessGroupPtr& process_group() const { return group_; }

  // Gradient accumulation: backward passes inside a no_sync() scope only
  // accumulate locally; the first backward after it synchronizes the sum.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool prev_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  // The buckets' parameter names in launch order (tests, logs).
  std::vector<std::vector<std::string>> bucket_parameter_names() const;
  const DistributedDataParallelStats& last_stats() const;

 private:
  void broadcast_buffers();

  ModulePtr module_;
  distributed::ProcessGroupPtr group_;
  Options options_;
  bool require_sync_ = true;
  std::shared_ptr<Reducer> reducer_;
};

}  // namespace ember::nn

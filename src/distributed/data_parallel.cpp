// nn::DistributedDataParallel: the module wrapper; the buckets are in
// reducer.cpp.
#include "ember/distributed/data_parallel.h"

#include <map>

#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "reducer.h"

namespace ember::nn {
namespace {

// Copies rank 0's tensors to every rank: one broadcast per dtype over a
// flat copy (few messages however many small tensors, e.g. BatchNorm's).
void broadcast_coalesced(const distributed::ProcessGroupPtr& group, const std::vector<Tensor>& tensors) {
  if (group->size() == 1) return;
  NoGradGuard no_grad;
  std::map<ScalarType, std::vector<Tensor>> by_dtype;
  for (const Tensor& t : tensors) by_dtype[t.dtype()].push_back(t);
  for (auto& [dtype, list] : by_dtype) {
    int64_t n = 0;
    for (const Tensor& t : list) n += t.numel();
    Tensor flat = empty({n}, dtype);
    int64_t off = 0;
    for (const Tensor& t : list) {
      flat.narrow(0, off, t.numel()).copy_(t.reshape({-1}));
      off += t.numel();
    }
    group->broadcast(flat, 0);
    if (group->rank() == 0) continue;
    off = 0;
    for (Tensor t : list) {  // a handle: copy_ writes the module's tensor
      t.copy_(flat.narrow(0, off, t.numel()).view(t.sizes()));
      off += t.numel();
    }
  }
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(ModulePtr module, distributed::ProcessGroupPtr group,
                                                 Options options)
    : Module("DistributedDataParallel"), module_(std::move(module)), group_(std::move(group)), options_(options) {
  EMBER_CHECK(module_ != nullptr, "DistributedDataParallel: module is null");
  EMBER_CHECK(group_ != nullptr, "DistributedDataParallel: process group is null");
  register_module("module", module_);
  std::vector<Tensor> state = module_->parameters();
  for (const Tensor& b : module_->buffers()) state.push_back(b);
  broadcast_coalesced(group_, state);
  std::vector<std::pair<std::string, Tensor>> params;
  for (auto& [name, p] : module_->named_parameters())
    if (p.requires_grad()) params.emplace_back(name, p);
  reducer_ = std::make_shared<Reducer>(std::move(params), group_, options_);
  reducer_->install_hooks();
}

DistributedDataParallel::~DistributedDataParallel() = default;

// Training mode only (PyTorch syncs in eval too): evaluation loops often run
// a different number of batches per rank, and a collective there would pair
// up wrongly.
void DistributedDataParallel::broadcast_buffers() {
  if (!options_.broadcast_buffers || group_->size() == 1 || !module_->is_training()) return;
  std::vector<Tensor> buffers = module_->buffers();
  if (!buffers.empty()) broadcast_coalesced(group_, buffers);
}

void DistributedDataParallel::prepare_forward() {
  broadcast_buffers();
  if (require_sync_ && GradMode::is_enabled() && module_->is_training()) reducer_->arm();
  else reducer_->disarm();
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  prepare_forward();
  return module_->forward(input);
}

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp) : ddp_(ddp), prev_(ddp.require_sync_) {
  ddp_.require_sync_ = false;
}
DistributedDataParallel::NoSync::~NoSync() { ddp_.require_sync_ = prev_; }

std::vector<std::vector<std::string>> DistributedDataParallel::bucket_parameter_names() const {
  return reducer_->bucket_names();
}

const DistributedDataParallelStats& DistributedDataParallel::last_stats() const { return reducer_->stats(); }

}  // namespace ember::nn

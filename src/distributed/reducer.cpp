// Note [gradient buckets]
// Parameters are grouped into flat buckets in reverse registration order
// (roughly the order backward produces their gradients), one dtype per
// bucket; a bucket closes when it reaches its cap (the first 1 MiB so that
// communication starts early, then 25 MiB), PyTorch's assignment. In an
// armed backward each parameter's gradient hook (run by AccumulateGrad with
// this backward's gradient g just before it adds g to grad()) writes what
// grad() is about to become, g or g + grad() (the same sum, the same bits),
// into its bucket slot; when a bucket's last slot is filled, that
// bucket and every following filled one are launched as asynchronous
// averaging allreduces, strictly in bucket order, so every rank issues the
// same sequence of collectives whatever order its gradients arrive in. The
// first hook queues an end-of-backward callback (autograd::queue_callback)
// that fills the slots of parameters that got no gradient with zeros,
// launches the rest, waits, allreduces a per-parameter "used" count and then
// either names the unused parameters (an error on every rank: no rank is
// left waiting) or writes the averages back into grad().
#include "reducer.h"

#include <cmath>
#include <map>

#include "ember/autograd/callback.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::nn {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Reducer::Reducer(std::vector<std::pair<std::string, Tensor>> params, distributed::ProcessGroupPtr group,
                 const DistributedDataParallelOptions& options)
    : params_(std::move(params)), group_(std::move(group)), find_unused_(options.find_unused_parameters) {
  EMBER_CHECK(options.bucket_cap_mb > 0 && options.first_bucket_cap_mb > 0,
              "DistributedDataParallel: bucket caps must be positive, got bucket_cap_mb={} first_bucket_cap_mb={}",
              options.bucket_cap_mb, options.first_bucket_cap_mb);
  ready_.assign(params_.size(), 0);
  assign_buckets(options);
}

void Reducer::assign_buckets(const DistributedDataParallelOptions& options) {
  const auto mib = [](double mb) { return static_cast<size_t>(mb * 1024.0 * 1024.0); };
  struct Open {
    Bucket bucket;
    size_t bytes = 0;
    size_t limit;
  };
  std::map<ScalarType, Open> open;
  std::vector<Bucket> closed;
  auto close = [&](Open& o) {
    if (!o.bucket.params.empty()) closed.push_back(std::move(o.bucket));
    o.bucket = Bucket();
    o.bytes = 0;
    o.limit = mib(options.bucket_cap_mb);
  };
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k].second;
    auto [it, fresh] = open.try_emplace(p.dtype(), Open{Bucket(), 0, mib(options.first_bucket_cap_mb)});
    Open& o = it->second;
    o.bucket.params.push_back(k);
    o.bytes += p.nbytes();
    if (o.bytes >= o.limit) close(o);
  }
  for (auto& [dtype, o] : open) close(o);
  // Launch order: by each bucket's first parameter in reverse order.
  std::stable_sort(closed.begin(), closed.end(),
                   [](const Bucket& a, const Bucket& b) { return a.params.front() > b.params.front(); });
  where_.assign(params_.size(), {0, 0});
  for (size_t b = 0; b < closed.size(); ++b) {
    Bucket& bucket = closed[b];
    int64_t n = 0;
    for (size_t j = 0; j < bucket.params.size(); ++j) {
      bucket.offsets.push_back(n);
      n += params_[bucket.params[j]].second.numel();
      where_[bucket.params[j]] = {b, j};
    }
    bucket.flat = zeros({n}, params_[bucket.params.front()].second.dtype());
  }
  buckets_ = std::move(closed);
}

void Reducer::install_hooks() {
  std::weak_ptr<Reducer> self = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i)
    params_[i].second.register_hook([self, i](const Tensor& g) {
      if (auto r = self.lock()) r->on_grad_ready(i, g);
      return Tensor();  // the gradient itself is unchanged
    });
}

void Reducer::arm() {
  armed_ = true;
  param_ready_.assign(params_.size(), std::nan(""));
  finalize_queued_ = false;
  std::fill(ready_.begin(), ready_.end(), 0);
  next_launch_ = 0;
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
}

Tensor Reducer::slot(size_t index) const {
  auto [b, j] = where_[index];
  const Tensor& p = params_[index].second;
  return buckets_[b].flat.narrow(0, buckets_[b].offsets[j], p.numel());
}

void Reducer::on_grad_ready(size_t index, const Tensor& incoming) {
  if (!armed_) return;  // no_sync, or a backward without a DDP forward
  EMBER_CHECK(!ready_[index],
              "DistributedDataParallel: parameter '{}' received its gradient twice in one iteration (a second "
              "backward through the same forward); run forward again before each backward, or accumulate inside "
              "no_sync()",
              params_[index].first);
  if (!finalize_queued_) {
    std::weak_ptr<Reducer> self = weak_from_this();
    autograd::queue_callback([self] {
      if (auto r = self.lock()) r->finalize();
    });
    finalize_queued_ = true;
  }
  ready_[index] = 1;
  {
    NoGradGuard no_grad;
    const Tensor& p = params_[index].second;
    Tensor s = slot(index);
    s.copy_(incoming.reshape({-1}));  // copy_ converts the dtype as AccumulateGrad does
    Tensor accumulated = p.grad();    // from no_sync() iterations
    if (accumulated.defined()) s.add_(accumulated.reshape({-1}));
  }
  param_ready_[index] = seconds_now();  // when its bucket slot is filled
  if (--buckets_[where_[index].first].pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.work = group_->all_reduce_async(b.flat, distributed::ReduceOp::Avg);
  }
}

void Reducer::finalize() {
  armed_ = false;
  auto backward_end = Clock::now();
  const double backward_end_s = seconds_now();
  NoGradGuard no_grad;
  Tensor used = zeros({static_cast<int64_t>(params_.size())}, kFloat32);
  auto* u = used.data_ptr<float>();
  for (size_t i = 0; i < params_.size(); ++i) {
    u[i] = ready_[i] ? 1.0f : 0.0f;
    if (ready_[i]) continue;
    slot(i).zero_();
    --buckets_[where_[i].first].pending;
  }
  launch_ready_buckets();
  stats_ = DistributedDataParallelStats();
  stats_.buckets = static_cast<int64_t>(buckets_.size());
  stats_.backward_end_s = backward_end_s;
  stats_.param_ready_s = param_ready_;
  for (Bucket& b : buckets_) {
    b.work->wait();
    stats_.comm_s += b.work->duration_s();
  }
  stats_.exposed_s = std::chrono::duration<double>(Clock::now() - backward_end).count();
  // Every rank learns which parameters some rank did not use, so all of them
  // raise together (or all continue).
  group_->all_reduce(used, distributed::ReduceOp::Sum);
  const int world = group_->size();
  if (!find_unused_) {
    std::vector<std::string> unused;
    for (size_t i = 0; i < params_.size(); ++i)
      if (u[i] < static_cast<float>(world))
        unused.push_back(fmt::format("{} (used on {} of {} ranks{})", params_[i].first, static_cast<int>(u[i]), world,
                                     ready_[i] ? "" : ", not on this one"));
    EMBER_CHECK(unused.empty(),
                "DistributedDataParallel: {} parameter(s) received no gradient in this iteration on rank {}'s job: "
                "{}. Pass find_unused_parameters=true if parts of the model may go unused, or make sure the loss "
                "depends on every parameter",
                unused.size(), group_->rank(), fmt::join(unused, ", "));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (u[i] == 0.0f) continue;  // no rank used it: grad() stays as it was
    const Tensor& p = params_[i].second;
    Tensor avg = slot(i).view(p.sizes());
    Tensor g = p.grad();
    if (g.defined()) g.copy_(avg);
    else p.set_grad(avg.clone());
  }
}

std::vector<std::vector<std::string>> Reducer::bucket_names() const {
  std::vector<std::vector<std::string>> out;
  for (const Bucket& b : buckets_) {
    out.emplace_back();
    for (size_t i : b.params) out.back().push_back(params_[i].first);
  }
  return out;
}

}  // namespace ember::nn

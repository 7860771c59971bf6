// Reducer: DistributedDataParallel's gradient buckets (private to
// src/distributed; see Note [gradient buckets] in reducer.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/data_parallel.h"

namespace ember::nn {

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  Reducer(std::vector<std::pair<std::string, Tensor>> params, distributed::ProcessGroupPtr group,
          const DistributedDataParallelOptions& options);
  // Registers the hooks (they hold a weak reference: a destroyed DDP's
  // hooks do nothing).
  void install_hooks();
  // Called by forward: the next backward synchronizes.
  void arm();
  void disarm() { armed_ = false; }

  std::vector<std::vector<std::string>> bucket_names() const;
  const DistributedDataParallelStats& stats() const { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Bucket {
    std::vector<size_t> params;   // indices into params_
    std::vector<int64_t> offsets;  // element offset of each in flat
    Tensor flat;
    size_t pending = 0;
    distributed::WorkPtr work;
  };
  void on_grad_ready(size_t index, const Tensor& incoming);
  void launch_ready_buckets();
  void finalize();
  Tensor slot(size_t index) const;
  void assign_buckets(const DistributedDataParallelOptions& options);

  std::vector<std::pair<std::string, Tensor>> params_;
  distributed::ProcessGroupPtr group_;
  bool find_unused_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, position)

  // Per iteration.
  bool armed_ = false;
  bool finalize_queued_ = false;
  std::vector<char> ready_;
  std::vector<double> param_ready_;
  size_t next_launch_ = 0;
  DistributedDataParallelStats stats_;
};

}  // namespace ember::nn

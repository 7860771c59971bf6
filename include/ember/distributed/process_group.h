// ProcessGroup: collectives on tensors among the ranks of a data-parallel
// job (torch.distributed's ProcessGroup). The interface lives in libember
// and has no MPI in it; init_process_group("mpi") (ember/distributed/mpi.h,
// libember_distributed) returns the MPI implementation.
//
//   auto pg = distributed::init_process_group("mpi");
//   pg->all_reduce(grad, distributed::ReduceOp::Avg);      // blocking
//   auto work = pg->all_reduce_async(bucket);              // returns at once
//   ...                                                    // compute meanwhile
//   work->wait();
//
// Every rank must issue the same collectives in the same order (as in MPI).
// Tensors are contiguous CPU tensors; an async op owns a reference to them
// and they must not be touched until wait() returns.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ember/core/tensor.h"

namespace ember::distributed {

enum class ReduceOp { Sum, Avg, Max };
const char* reduce_op_name(ReduceOp op);

// The handle of an asynchronous collective.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until done; raises the collective's error (a timeout names the
  // collective and its sequence number).
  virtual void wait() = 0;
  virtual bool is_completed() = 0;
  // Seconds the collective spent running (0 until completed).
  virtual double duration_s() const = 0;
};
using WorkPtr = std::shared_ptr<Work>;

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;

  // In place on `tensor`: every rank ends with the same reduction. Sums are
  // taken in a fixed order for a given world size (see the backend), so a
  // run repeats bit for bit.
  virtual WorkPtr all_reduce_async(const Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  // In place: every rank ends with root's values.
  virtual WorkPtr broadcast_async(const Tensor& tensor, int root = 0) = 0;
  // output holds size() * input.numel() elements: rank r's input at block r
  // (torch.distributed.all_gather_into_tensor).
  virtual WorkPtr all_gather_async(const Tensor& output, const Tensor& input) = 0;
  // input holds size() * output.numel() elements; rank r receives the
  // reduction of every rank's block r (reduce_scatter_tensor).
  virtual WorkPtr reduce_scatter_async(const Tensor& output, const Tensor& input,
                                       ReduceOp op = ReduceOp::Sum) = 0;
  virtual WorkPtr barrier_async() = 0;

  // Blocking forms.
  void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum) { all_reduce_async(tensor, op)->wait(); }
  void broadcast(const Tensor& tensor, int root = 0) { broadcast_async(tensor, root)->wait(); }
  void all_gather(const Tensor& output, const Tensor& input) { all_gather_async(output, input)->wait(); }
  void reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum) {
    reduce_scatter_async(output, input, op)->wait();
  }
  void barrier() { barrier_async()->wait(); }

  // Ends the whole job after a fatal error on this rank: every other rank
  // exits too (the MPI launcher names this rank). A world of one just exits.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

// A world of one rank (no MPI): collectives are copies. What
// init_process_group gives without a launcher or with EMBER_DIST=off.
ProcessGroupPtr local_process_group();

// Shared argument checks of the backends (op name, tensor, sizes).
void check_collective_tensor(const char* op, const Tensor& t);
void check_reduce_op(const char* op, const Tensor& t, ReduceOp r);
void check_gather_sizes(const char* op, const Tensor& big, const Tensor& small, int world,
                        const char* big_name, const char* small_name);

}  // namespace ember::distributed

// The backend-independent part of ProcessGroup: argument checks and the
// world of one rank.
#include "ember/distributed/process_group.h"

#include <cstdlib>

#include "ember/core/grad_mode.h"
#include "ember/core/error.h"

namespace ember::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Max: return "max";
  }
  return "?";
}

void check_collective_tensor(const char* op, const Tensor& t) {
  EMBER_CHECK(t.defined(), "{}: got an undefined tensor", op);
  EMBER_CHECK(t.device().is_cpu(), "{}: tensors must be on the CPU, got {}", op, t.device().str());
  EMBER_CHECK(t.is_contiguous(), "{}: tensor of shape [{}] is not contiguous; pass t.contiguous() and copy back",
              op, fmt::join(t.sizes(), ", "));
  ScalarType d = t.dtype();
  EMBER_CHECK(d == kFloat32 || d == kFloat64 || d == kInt32 || d == kInt64 || d == kInt16 || d == kUInt8 ||
                  d == kInt8,
              "{}: dtype {} is not supported (float32, float64, int32, int64, int16, int8, uint8)", op, to_string(d));
}

void check_reduce_op(const char* op, const Tensor& t, ReduceOp r) {
  check_collective_tensor(op, t);
  EMBER_CHECK(r != ReduceOp::Avg || t.is_floating_point(), "{}: ReduceOp avg needs a floating-point tensor, got {}",
              op, to_string(t.dtype()));
}

void check_gather_sizes(const char* op, const Tensor& big, const Tensor& small, int world, const char* big_name,
                        const char* small_name) {
  check_collective_tensor(op, big);
  check_collective_tensor(op, small);
  EMBER_CHECK(big.dtype() == small.dtype(), "{}: {} is {} but {} is {}", op, big_name, to_string(big.dtype()),
              small_name, to_string(small.dtype()));
  EMBER_CHECK(big.numel() == small.numel() * world,
              "{}: {} has {} elements; expected world size {} x {} elements of {} = {}", op, big_name, big.numel(),
              world, small.numel(), small_name, small.numel() * world);
}

namespace {

class DoneWork final : public Work {
 public:
  void wait() override {}
  bool is_completed() override { return true; }
  double duration_s() const override { return 0.0; }
};

// World size 1: the reduction of one rank is its own tensor.
class LocalProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "local"; }
  WorkPtr all_reduce_async(const Tensor& t, ReduceOp op) override {
    check_reduce_op("all_reduce", t, op);
    return done();
  }
  WorkPtr broadcast_async(const Tensor& t, int root) override {
    check_collective_tensor("broadcast", t);
    EMBER_CHECK(root == 0, "broadcast: root {} is not a rank of a world of size 1", root);
    return done();
  }
  WorkPtr all_gather_async(const Tensor& output, const Tensor& input) override {
    check_gather_sizes("all_gather", output, input, 1, "output", "input");
    copy_flat(output, input);
    return done();
  }
  WorkPtr reduce_scatter_async(const Tensor& output, const Tensor& input, ReduceOp op) override {
    check_gather_sizes("reduce_scatter", input, output, 1, "input", "output");
    check_reduce_op("reduce_scatter", input, op);
    copy_flat(output, input);
    return done();
  }
  WorkPtr barrier_async() override { return done(); }
  [[noreturn]] void abort(int exit_code) override { std::exit(exit_code); }

 private:
  static WorkPtr done() { return std::make_shared<DoneWork>(); }
  static void copy_flat(const Tensor& out, const Tensor& in) {
    NoGradGuard no_grad;
    out.view({out.numel()}).copy_(in.reshape({in.numel()}));
  }
};

}  // namespace

ProcessGroupPtr local_process_group() { return std::make_shared<LocalProcessGroup>(); }

}  // namespace ember::distributed

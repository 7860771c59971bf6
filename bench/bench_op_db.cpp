// The op_db micro-benchmark: one Google Benchmark per op_db entry
// (tests/op_db/), so every op in docs/ops.md has a timing next to its tests.
//   forward/<op>.<variant>           the entry on its reference inputs (small:
//                                    the per-call cost a model pays per op)
//   backward/<op>.<variant>          forward and backward (differentiable entries)
//   forward_f32_64k/<op>.<variant>   pointwise entries at 65,536 float32 elements
//                                    per input (the per-element cost)
// Filter as usual: bench_op_db --benchmark_filter='forward/(exp|erf)\.'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "bench_util.h"
#include "op_db.h"
#include "reference.h"

using namespace ember;
using namespace ember::op_db;

namespace {

// The reference inputs at dtype (floating inputs only), each tiled to at
// least `min_numel` elements along its first dimension.
Tensors inputs_at(const OpInfo& op, ScalarType dtype, int64_t min_numel) {
  Tensors xs = inputs_of(op);
  for (Tensor& x : xs) {
    if (x.is_floating_point()) x = x.to(dtype);
    if (min_numel > 0 && x.dim() > 0 && x.numel() > 0 && x.numel() < min_numel) {
      std::vector<int64_t> reps(static_cast<size_t>(x.dim()), 1);
      reps[0] = (min_numel + x.numel() - 1) / x.numel();
      x = x.repeat(reps).contiguous();
    }
  }
  return xs;
}

void run_forward(benchmark::State& state, const OpInfo* op, ScalarType dtype, int64_t min_numel) {
  bench::default_threads();
  Tensors xs = inputs_at(*op, dtype, min_numel);
  NoGradGuard no_grad;
  for (auto _ : state) {
    Tensors ys = op->fn(xs);
    benchmark::DoNotOptimize(ys.data());
  }
}

void run_backward(benchmark::State& state, const OpInfo* op) {
  bench::default_threads();
  Tensors xs = inputs_at(*op, kFloat64, 0);
  for (Tensor& x : xs)
    if (x.is_floating_point()) x.requires_grad_();
  for (auto _ : state) {
    Tensor loss;
    for (const Tensor& y : op->fn(xs))
      if (y.is_floating_point() && y.requires_grad()) loss = loss.defined() ? loss + y.sum() : y.sum();
    if (loss.defined()) loss.backward();
    for (Tensor& x : xs)
      if (x.requires_grad()) x.set_grad(Tensor());
  }
}

// Same-shape pointwise inputs tile to the same size, so broadcasting cases
// stay valid; the other groups' shapes carry meaning and stay as they are.
bool scales_pointwise(const OpInfo& op) {
  if (op.group != "pointwise" || std::find(op.dtypes.begin(), op.dtypes.end(), kFloat32) == op.dtypes.end())
    return false;
  Tensors xs = inputs_of(op);
  for (const Tensor& x : xs)
    if (x.dim() == 0 || x.sizes().vec() != xs[0].sizes().vec()) return false;
  return true;
}

void register_all() {
  set_reference_dir(std::string(EMBER_TEST_DATA_DIR) + "/op_db");
  for (const OpInfo& op : registry()) {
    const std::string key = entry_key(op);
    benchmark::RegisterBenchmark(("forward/" + key).c_str(), run_forward, &op, kFloat64, int64_t{0});
    if (op.differentiable) benchmark::RegisterBenchmark(("backward/" + key).c_str(), run_backward, &op);
    if (scales_pointwise(op))
      benchmark::RegisterBenchmark(("forward_f32_64k/" + key).c_str(), run_forward, &op, kFloat32,
                                   int64_t{1} << 16);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

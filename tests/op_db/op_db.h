// The op database (PyTorch's OpInfo, ggml's test-backend-ops): one entry per
// op and variant drives every generic check of tests/op_db/test_op_db.cpp —
// forward against PyTorch's values, the same on non-contiguous inputs, the
// gradient against PyTorch's, finite differences of the first and second
// derivatives, the extra dtypes — and
// docs/ops.md's coverage table. Adding an op: an entry in the group's file
// (pointwise.cpp, tensor.cpp, nn.cpp, ...) and its reference case in the
// group's generator (tests/data/op_db/gen_GROUP.py).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::op_db {

using Tensors = std::vector<Tensor>;
// Runs the op on the reference inputs; multi-output ops (sort, aminmax,
// std_mean, ...) return every output in PyTorch's order.
using OpFn = std::function<Tensors(const Tensors&)>;

enum class Impl { kernel, composite };

struct OpInfo {
  std::string op;                 // PyTorch's name, as in OPS.md ("atan2", "interpolate")
  std::string variant;            // the reference case: "<op>.<variant>.*" in the group's file
  std::string group;              // tests/data/op_db/<group>.safetensors
  OpFn fn;
  Impl impl = Impl::kernel;
  bool differentiable = true;     // false: marked not differentiable, no gradient checks
  bool gradcheck = true;          // also finite differences (off where a sample sits on a kink)
  // Also the second derivative (gradgradcheck: finite differences of the
  // vector-Jacobian product built with create_graph). Off only where the
  // backward is itself not differentiable, which backward then reports.
  bool gradgrad = true;
  // Further dtypes the float64 reference case runs in (inputs cast, outputs
  // compared in float64 at that dtype's tolerance).
  std::vector<ScalarType> dtypes = {};
  // Also run in float32 (every entry does unless it says why not).
  bool float32 = true;
  // The reference case the entry runs when it is not "<op>.<variant>": an
  // alias or an in-place form runs its base op's case.
  std::string reference = {};
  // Exported functions the entry exercises whose names differ from `op` (an
  // alias, an in-place form, a _with_indices overload): the completeness
  // test counts them as covered.
  std::vector<std::string> calls = {};
  double rtol = 1e-7;             // float64 forward and gradient tolerance
  double atol = 1e-10;
};

std::vector<OpInfo>& registry();

// Static registration from each group's file:
//   static const op_db::Registrar reg({OpInfo{...}, ...});
struct Registrar {
  explicit Registrar(std::vector<OpInfo> ops);
};

// An OpFn from a callable returning one Tensor.
template <typename F>
OpFn one(F f) {
  return [f](const Tensors& x) { return Tensors{f(x)}; };
}

}  // namespace ember::op_db

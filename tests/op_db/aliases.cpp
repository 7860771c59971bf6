// op_db entries for the exported names that are another op under PyTorch's
// alias (torch.absolute is torch.abs), its in-place form (F.elu_), or its
// overload with indices: each runs its base op's reference case, so every
// generic check (forward, non-contiguous, gradient, finite differences)
// covers the name too, and the completeness test in test_op_db.cpp finds it.
#include "op_db.h"

namespace ember::op_db {
namespace {

class Aliases {
 public:
  // `name` runs op's reference case `base` of `group`.
  void add(std::string op, std::string base, std::string group, std::string name, OpFn fn,
           bool differentiable = true) {
    OpInfo info;
    info.op = std::move(op);
    info.variant = "via_" + name;
    info.reference = std::move(base);
    info.group = std::move(group);
    info.fn = std::move(fn);
    info.differentiable = differentiable;
    info.calls = {std::move(name)};
    ops.push_back(std::move(info));
  }
  std::vector<OpInfo> ops;
};

#define EMBER_FN(expr) one([](const Tensors& x) { return expr; })

// In-place forms write into a fresh non-leaf copy, as a user's activation
// output would be, so autograd rebases the copy's history onto the op.
#define EMBER_INPLACE(call) one([](const Tensors& x) { Tensor y = x[0].clone(); call; return y; })

void pointwise_aliases(Aliases& a) {
  const std::string g = "pointwise";
  a.add("abs", "default", g, "absolute", EMBER_FN(absolute(x[0])));
  a.add("acos", "default", g, "arccos", EMBER_FN(arccos(x[0])));
  a.add("acosh", "default", g, "arccosh", EMBER_FN(arccosh(x[0])));
  a.add("asin", "default", g, "arcsin", EMBER_FN(arcsin(x[0])));
  a.add("asinh", "default", g, "arcsinh", EMBER_FN(arcsinh(x[0])));
  a.add("atan", "default", g, "arctan", EMBER_FN(arctan(x[0])));
  a.add("atanh", "default", g, "arctanh", EMBER_FN(arctanh(x[0])));
  a.add("atan2", "broadcast", g, "arctan2", EMBER_FN(arctan2(x[0], x[1])));
  a.add("clamp", "scalar", g, "clip", EMBER_FN(clip(x[0], -0.5, 0.5)));
  a.add("clamp", "min_only", g, "clamp_min", EMBER_FN(clamp_min(x[0], 0.1)));
  a.add("clamp", "scalar", g, "clamp_max", EMBER_FN(clamp_max(clamp_min(x[0], -0.5), 0.5)));
  a.add("div", "default", g, "divide", EMBER_FN(divide(x[0], x[1])));
  a.add("div", "default", g, "true_divide", EMBER_FN(true_divide(x[0], x[1])));
  a.add("trunc", "default", g, "fix", EMBER_FN(fix(x[0])));
  a.add("mul", "broadcast", g, "multiply", EMBER_FN(multiply(x[0], x[1])));
  a.add("neg", "default", g, "negative", EMBER_FN(negative(x[0])));
  a.add("neg", "default", g, "rsub", EMBER_FN(rsub(x[0], 0)));  // 0 - x (an int 0 keeps integer inputs integral)
  a.add("sub", "broadcast", g, "subtract", EMBER_FN(subtract(x[0], x[1])));
  a.add("gt", "broadcast", g, "greater", EMBER_FN(greater(x[0], x[1])), false);
  a.add("ge", "int_float", g, "greater_equal", EMBER_FN(greater_equal(x[0], x[1])), false);
  a.add("lt", "scalar", g, "less", EMBER_FN(less(x[0], 2.0)), false);
  a.add("le", "scalar", g, "less_equal", EMBER_FN(less_equal(x[0], 2.0)), false);
  a.add("ne", "broadcast", g, "not_equal", EMBER_FN(not_equal(x[0], x[1])), false);

  a.add("add", "broadcast_alpha", g, "add_", one([](const Tensors& x) {
          // A non-leaf of x[0]'s shape and dtype (x * 1 would make a bool int64); broadcasting writes into it.
          Tensor y = x[0].is_floating_point() ? x[0] * 1 : x[0].clone();
          add_(y, x[1], 2);
          return y;
        }));
  a.add("mul", "broadcast", g, "mul_", one([](const Tensors& x) {
          Tensor y = x[0] * ones_like(x[1]);  // x[0] broadcasts to the result's shape first
          mul_(y, x[1]);
          return y;
        }));
  a.add("neg", "default", g, "copy_", one([](const Tensors& x) {
          Tensor y = zeros_like(x[0]);
          y.copy_(neg(x[0]));
          return y;
        }));
  a.add("elu", "alpha", g, "elu_", EMBER_INPLACE(elu_(y, 0.5)));
  a.add("celu", "alpha", g, "celu_", EMBER_INPLACE(celu_(y, 1.5)));
  a.add("selu", "default", g, "selu_", EMBER_INPLACE(selu_(y)));
  a.add("hardtanh", "range", g, "hardtanh_", EMBER_INPLACE(hardtanh_(y, -2.0, 0.5)));
  a.add("leaky_relu", "slope", g, "leaky_relu_", EMBER_INPLACE(leaky_relu_(y, 0.2)));
  a.add("rrelu", "eval", g, "rrelu_", EMBER_INPLACE(rrelu_(y, 1.0 / 8, 1.0 / 3, false)));
  a.add("threshold", "default", g, "threshold_", EMBER_INPLACE(threshold_(y, 0.5, -2.0)));
}

void tensor_aliases(Aliases& a) {
  const std::string g = "tensor";
  a.add("movedim", "int", g, "moveaxis", EMBER_FN(moveaxis(x[0], 0, -1)));
  a.add("transpose", "default", g, "swapaxes", EMBER_FN(swapaxes(x[0], -1, 0)));
  a.add("inverse", "batched", g, "linalg_inv", EMBER_FN(linalg_inv(x[0])));
}

void functional_aliases(Aliases& a) {
  const std::string g = "functional";
  a.add("max_pool2d", "dilation", g, "max_pool2d_with_indices",
        EMBER_FN(max_pool2d_with_indices(x[0], {3}, {2}, {1}, {2}).first));
}

std::vector<OpInfo> all_aliases() {
  Aliases a;
  pointwise_aliases(a);
  tensor_aliases(a);
  functional_aliases(a);
  return std::move(a.ops);
}

const Registrar reg(all_aliases());

}  // namespace
}  // namespace ember::op_db

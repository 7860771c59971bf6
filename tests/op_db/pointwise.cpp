// op_db entries: pointwise ops and activations (OPS.md "Pointwise" and the
// elementwise part of torch.nn.functional). Reference cases:
// tests/data/op_db/gen_pointwise.py.
#include "op_db.h"

namespace ember::op_db {
namespace {

OpInfo pointwise(std::string op, std::string variant, OpFn fn) {
  OpInfo info;
  info.op = std::move(op);
  info.variant = std::move(variant);
  info.group = "pointwise";
  info.fn = std::move(fn);
  return info;
}

std::vector<OpInfo> entries() {
  std::vector<OpInfo> ops;
  ops.push_back(pointwise("exp", "default", one([](const Tensors& x) { return exp(x[0]); })));
  ops.back().dtypes = {kFloat32, kBFloat16};
  ops.push_back(pointwise("mul", "broadcast", one([](const Tensors& x) { return mul(x[0], x[1]); })));
  return ops;
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

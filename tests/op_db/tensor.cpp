// op_db entries: reductions, comparison and sorting, indexing/shape, "Other"
// and linear algebra (OPS.md's sections of those names). Reference cases:
// tests/data/op_db/gen_tensor.py.
#include "op_db.h"

namespace ember::op_db {
namespace {

OpInfo tensor_op(std::string op, std::string variant, OpFn fn) {
  OpInfo info;
  info.op = std::move(op);
  info.variant = std::move(variant);
  info.group = "tensor";
  info.fn = std::move(fn);
  return info;
}

std::vector<OpInfo> entries() {
  std::vector<OpInfo> ops;
  ops.push_back(tensor_op("cumsum", "dim1", one([](const Tensors& x) { return cumsum(x[0], 1); })));
  ops.push_back(tensor_op("sort", "descending", [](const Tensors& x) {
    auto [values, indices] = sort(x[0], -1, /*descending=*/true);
    return Tensors{values, indices};
  }));
  return ops;
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

// op_db entries: torch.nn.functional (pooling, convolution, normalization,
// resampling, attention, ...) and the losses. Reference cases:
// tests/data/op_db/gen_functional.py.
#include "op_db.h"

namespace ember::op_db {
namespace {

OpInfo functional(std::string op, std::string variant, OpFn fn) {
  OpInfo info;
  info.op = std::move(op);
  info.variant = std::move(variant);
  info.group = "functional";
  info.fn = std::move(fn);
  return info;
}

std::vector<OpInfo> entries() {
  std::vector<OpInfo> ops;
  ops.push_back(functional("softmax", "dim1", one([](const Tensors& x) { return softmax(x[0], 1); })));
  ops.push_back(functional("mse_loss", "sum",
                           one([](const Tensors& x) { return nn::functional::mse_loss(x[0], x[1], "sum"); })));
  ops.back().impl = Impl::composite;
  return ops;
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

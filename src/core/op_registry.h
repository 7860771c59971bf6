// The op list as an enum, and the kernel table indexed by (op, device).
// A missing kernel raises "sqrt: no kernel for device cuda:0" instead of
// crashing.
#pragma once

#include <string_view>

#include "ember/core/device.h"
#include "ember/core/error.h"

namespace ember {

enum class OpFamily : uint8_t { Elementwise, Reduce, Generic };

enum class Op : uint16_t {
#define EMBER_OP(name, family) name,
#include "core/ops.def"
#undef EMBER_OP
  NumOps
};
constexpr int kNumOps = static_cast<int>(Op::NumOps);

std::string_view op_name(Op op);
OpFamily op_family(Op op);

using AnyKernel = void (*)();

void register_kernel(Op op, DeviceType device, AnyKernel fn);
AnyKernel find_kernel(Op op, DeviceType device);  // null when missing
[[noreturn]] void throw_missing_kernel(Op op, Device device);

// Typed lookup: Fn is the kernel signature of the op's family.
template <typename Fn>
Fn* get_kernel(Op op, Device device) {
  AnyKernel k = find_kernel(op, device.type());
  if (!k) [[unlikely]]
    throw_missing_kernel(op, device);
  return reinterpret_cast<Fn*>(k);
}

// Registers a kernel at static-initialisation time:
//   EMBER_REGISTER_KERNEL(exp, CPU, exp_kernel);
struct KernelRegistrar {
  template <typename Fn>
  KernelRegistrar(Op op, DeviceType dev, Fn* fn) {
    register_kernel(op, dev, reinterpret_cast<AnyKernel>(fn));
  }
};
#define EMBER_CONCAT_INNER(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_INNER(a, b)
#define EMBER_REGISTER_KERNEL(op, dev, fn)                                           \
  static ::ember::KernelRegistrar EMBER_CONCAT(ember_kernel_reg_, __COUNTER__)(     \
      ::ember::Op::op, ::ember::DeviceType::dev, fn)

}  // namespace ember

// Op names and the kernel table.
#include "core/op_registry.h"

#include <array>

namespace ember {
namespace {

constexpr std::array<std::string_view, kNumOps> kOpNames = {
#define EMBER_OP(name, family) #name,
#include "core/ops.def"
#undef EMBER_OP
};

constexpr std::array<OpFamily, kNumOps> kOpFamilies = {
#define EMBER_OP(name, family) OpFamily::family,
#include "core/ops.def"
#undef EMBER_OP
};

// Filled only during static initialisation (single-threaded), read after.
std::array<std::array<AnyKernel, kNumDeviceTypes>, kNumOps>& table() {
  static std::array<std::array<AnyKernel, kNumDeviceTypes>, kNumOps> t{};
  return t;
}

}  // namespace

std::string_view op_name(Op op) { return kOpNames[static_cast<size_t>(op)]; }
OpFamily op_family(Op op) { return kOpFamilies[static_cast<size_t>(op)]; }

void register_kernel(Op op, DeviceType device, AnyKernel fn) {
  auto& slot = table()[static_cast<size_t>(op)][static_cast<size_t>(device)];
  EMBER_ASSERT(slot == nullptr, "kernel for {} registered twice", op_name(op));
  slot = fn;
}

AnyKernel find_kernel(Op op, DeviceType device) {
  return table()[static_cast<size_t>(op)][static_cast<size_t>(device)];
}

void throw_missing_kernel(Op op, Device device) {
  EMBER_ERROR("{}: no kernel for device {}", op_name(op), device.str());
}

}  // namespace ember

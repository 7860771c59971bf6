// Completeness of the op table: every primitive op in ops.def has a CPU
// kernel, and a missing kernel is a clear error rather than a crash.
#include "core/op_registry.h"
#include "test_util.h"

using namespace ember;

TEST(OpRegistry, EveryPrimitiveHasACpuKernel) {
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    EXPECT_NE(find_kernel(op, DeviceType::CPU), nullptr) << op_name(op) << " has no CPU kernel";
  }
}

TEST(OpRegistry, MissingKernelNamesOpAndDevice) {
  // This build has no CUDA kernels: asking for one is an error naming both.
  ember::testing::expect_error([] { get_kernel<void()>(Op::sqrt, Device("cuda:0")); },
                               {"sqrt: no kernel for device cuda:0"});
  EXPECT_EQ(op_name(Op::add), "add");
}

// Mixed precision: inside an AutocastGuard, matmul-like ops (linear, matmul,
// mm, bmm, conv) multiply bfloat16 operands with float32 accumulation and
// return float32; everything else (and the float32 master weights the
// optimizer updates) stays float32. Like torch.autocast("cpu",
// dtype=torch.bfloat16), a thread-local switch.
//
// Two implementations (Note [native bf16 autocast], src/ops/autocast_util.h):
// on CPUs with AVX512_BF16 or AMX, conv, linear and 2-D matmul run oneDNN's
// bf16 kernels (twice the float32 multiply rate); elsewhere, or when native
// bf16 is turned off (set_native_bf16(false), or EMBER_AUTOCAST_BF16=emulated
// in the environment), operands are rounded to bfloat16 precision and the
// float32 kernels run: the same products on every CPU, at float32 speed.
#pragma once

namespace ember {

struct Autocast {
  static bool is_enabled();
  static void set_enabled(bool enabled);
  // Whether this thread may use native bf16 kernels where the CPU has them;
  // the default is true unless EMBER_AUTOCAST_BF16=emulated.
  static bool native_bf16_allowed();
  static void set_native_bf16(bool allowed);
};

class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled = true) : prev_(Autocast::is_enabled()) { Autocast::set_enabled(enabled); }
  ~AutocastGuard() { Autocast::set_enabled(prev_); }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember

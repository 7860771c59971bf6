// Mixed precision: inside an AutocastGuard, matmul-like ops (linear, matmul,
// mm, bmm, conv) take their float32 operands rounded to bfloat16 and
// accumulate in float32, with float32 results; everything else (and the
// float32 master weights the optimizer updates) stays float32. Like
// torch.autocast("cpu", dtype=torch.bfloat16), a thread-local switch.
//
// The rounding is what oneDNN's bf16 kernels do on CPUs with AVX-512 BF16;
// Ember rounds and then runs its float32 kernels, so results are those of
// bf16 compute on every CPU (on AVX2-only CPUs this is slower than float32).
#pragma once

namespace ember {

struct Autocast {
  static bool is_enabled();
  static void set_enabled(bool enabled);
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

// Native bf16 autocast (Note [native bf16 autocast], src/ops/autocast_util.h):
// which path runs, and that both paths stay within bf16's error bound of
// float32, forward and backward, for conv2d, linear and mm.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ember/core/autocast.h"
#include "ember/ember.h"
#include "kernels/native_bf16.h"
#include "ops/autocast_util.h"

using namespace ember;

namespace {

// Sets this thread's native-bf16 permission for a scope.
class NativeBf16 {
 public:
  explicit NativeBf16(bool allowed) : prev_(Autocast::native_bf16_allowed()) { Autocast::set_native_bf16(allowed); }
  ~NativeBf16() { Autocast::set_native_bf16(prev_); }
  NativeBf16(const NativeBf16&) = delete;
  NativeBf16& operator=(const NativeBf16&) = delete;

 private:
  bool prev_;
};

// The CPU's flags as the kernel reports them, independently of oneDNN.
bool cpuinfo_has_bf16() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    std::string w;
    bool bf16 = false, amx = false;
    while (words >> w) {
      bf16 = bf16 || w == "avx512_bf16";
      amx = amx || w == "amx_bf16";
    }
    return bf16 || amx;
  }
  return false;
}

// True when some element of t (float32) has bits below bfloat16's mantissa.
bool has_sub_bf16_bits(const Tensor& t) {
  for (float v : t.contiguous().to_vector<float>()) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    if (u & 0xffffu) return true;
  }
  return false;
}

// Note [bf16 error bound]: each operand is rounded to bf16 (relative error
// u = 2^-9), so each product a*b is off by at most (2u + u^2)|a||b|, and a
// sum of products by at most 2.01u times the same sum over |a||b|. The
// emulated path also rounds a weight gradient to bf16 (another u of it) and
// float32 accumulation adds K * 2^-24 (K <= 600 here): all under 4u of the
// absolute sum. So every element obeys
//   |got - float32| <= 4 * 2^-9 * (the same op on |operands|) + 1e-6,
// a per-element bound that holds whatever the cancellation in the sum.
void expect_within_bf16_bound(const Tensor& got, const Tensor& ref, const Tensor& abs_op, const char* what,
                               bool must_differ = true) {
  ASSERT_EQ(got.sizes().vec(), ref.sizes().vec()) << what;
  ASSERT_EQ(got.dtype(), kFloat32) << what;
  std::vector<float> g = got.contiguous().to_vector<float>(), r = ref.contiguous().to_vector<float>(),
                     a = abs_op.contiguous().to_vector<float>();
  const double u = std::ldexp(1.0, -9);
  int64_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::abs(static_cast<double>(g[i]) - r[i]), bound = 4 * u * a[i] + 1e-6;
    if (!(err <= bound)) ++bad;
    worst = std::max(worst, err / bound);
  }
  EXPECT_EQ(bad, 0) << what << ": worst error / bound = " << worst;
  // The bound is not vacuous: bf16 products differ from float32 ones.
  if (must_differ) {
    EXPECT_FALSE(equal(got, ref)) << what << ": bf16 results equal float32 exactly";
  }
}

struct ConvGrads {
  Tensor y, gx, gw, gb;
};

ConvGrads conv_with_grads(const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& g, bool autocast) {
  Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
  Tensor y;
  {
    AutocastGuard guard(autocast);
    y = conv2d(x, w, b, {1}, {1});
  }
  y.backward(g);
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

}  // namespace

// The dispatch: native exactly when oneDNN reports AVX512_BF16/AMX (which
// /proc/cpuinfo confirms) and this thread allows it; the environment
// variable sets the default of new threads.
TEST(AutocastNative, DispatchFollowsTheCpuAndTheSetting) {
  EXPECT_EQ(cpu_has_native_bf16(), cpuinfo_has_bf16());
  {
    NativeBf16 allow(true);
    EXPECT_EQ(autocast_native_bf16(), cpuinfo_has_bf16());
  }
  {
    NativeBf16 deny(false);
    EXPECT_FALSE(autocast_native_bf16());
  }
  ASSERT_EQ(setenv("EMBER_AUTOCAST_BF16", "emulated", 1), 0);
  bool in_thread = true;
  std::thread([&] { in_thread = Autocast::native_bf16_allowed(); }).join();
  EXPECT_FALSE(in_thread);
  ASSERT_EQ(setenv("EMBER_AUTOCAST_BF16", "native", 1), 0);
  std::thread([&] { in_thread = Autocast::native_bf16_allowed(); }).join();
  EXPECT_TRUE(in_thread);
  unsetenv("EMBER_AUTOCAST_BF16");
}

// Which path ran shows in the weight gradient: the emulated path rounds it to
// bf16 (the backward of bf16_rounded, as torch's cast does), the native
// kernels write float32 sums.
TEST(AutocastNative, TheWeightGradientShowsWhichPathRan) {
  manual_seed(11);
  Tensor x = randn({4, 16, 8, 8}), w = randn({32, 16, 3, 3}) * 0.1, b = randn({32}), g = randn({4, 32, 8, 8});
  Tensor xl = randn({8, 64}), wl = randn({24, 64}), bl = randn({24}), gl = randn({8, 24});
  for (bool allow : {true, false}) {
    NativeBf16 setting(allow);
    const bool native = allow && cpuinfo_has_bf16();
    ConvGrads c = conv_with_grads(x, w, b, g, true);
    EXPECT_EQ(has_sub_bf16_bits(c.gw), native) << "conv, native allowed: " << allow;
    Tensor wr = wl.clone().requires_grad_();
    {
      AutocastGuard autocast;
      linear(xl, wr, bl).backward(gl);
    }
    EXPECT_EQ(has_sub_bf16_bits(wr.grad()), native) << "linear, native allowed: " << allow;
  }
}

TEST(AutocastNative, ConvForwardAndGradientsWithinBf16Bound) {
  manual_seed(12);
  Tensor x = randn({4, 16, 10, 10}), w = randn({32, 16, 3, 3}) * 0.2, b = randn({32}), g = randn({4, 32, 10, 10});
  ConvGrads ref = conv_with_grads(x, w, b, g, false);
  // The same ops on absolute values bound every element's rounding error.
  ConvGrads abs_op = conv_with_grads(x.abs(), w.abs(), zeros({32}), g.abs(), false);
  for (bool allow : {true, false}) {
    SCOPED_TRACE(allow ? "native allowed" : "emulated");
    NativeBf16 setting(allow);
    ConvGrads got = conv_with_grads(x, w, b, g, true);
    expect_within_bf16_bound(got.y, ref.y, abs_op.y, "conv y");
    expect_within_bf16_bound(got.gx, ref.gx, abs_op.gx, "conv dx");
    expect_within_bf16_bound(got.gw, ref.gw, abs_op.gw, "conv dw");
    // The bias gradient sums the incoming gradient: float32 on the emulated
    // path, bf16-rounded inside oneDNN's bf16 kernel on the native one.
    expect_within_bf16_bound(got.gb, ref.gb, abs_op.gb, "conv db", false);
  }
}

TEST(AutocastNative, LinearAndMmForwardAndGradientsWithinBf16Bound) {
  manual_seed(13);
  // A 3-D input: linear folds the leading dims into the GEMM's rows.
  Tensor x = randn({3, 5, 96}), w = randn({40, 96}) * 0.1, b = randn({40}), g = randn({3, 5, 40});
  auto run = [&](const Tensor& x0, const Tensor& w0, const Tensor& g0, bool autocast, bool bias) {
    Tensor xr = x0.clone().requires_grad_(), wr = w0.clone().requires_grad_();
    Tensor y;
    {
      AutocastGuard guard(autocast);
      y = linear(xr, wr, bias ? std::optional<Tensor>(b) : std::nullopt);
    }
    y.backward(g0);
    return std::array<Tensor, 3>{y.detach(), xr.grad(), wr.grad()};
  };
  auto ref = run(x, w, g, false, true), abs_op = run(x.abs(), w.abs(), g.abs(), false, false);
  Tensor a = randn({33, 70}), c = randn({70, 45}), gm = randn({33, 45});
  auto run_mm = [&](const Tensor& a0, const Tensor& c0, const Tensor& g0, bool autocast, bool via_matmul) {
    Tensor ar = a0.clone().requires_grad_(), cr = c0.clone().requires_grad_();
    Tensor y;
    {
      AutocastGuard guard(autocast);
      y = via_matmul ? matmul(ar, cr) : mm(ar, cr);
    }
    y.backward(g0);
    return std::array<Tensor, 3>{y.detach(), ar.grad(), cr.grad()};
  };
  auto ref_mm = run_mm(a, c, gm, false, false), abs_mm = run_mm(a.abs(), c.abs(), gm.abs(), false, false);
  for (bool allow : {true, false}) {
    SCOPED_TRACE(allow ? "native allowed" : "emulated");
    NativeBf16 setting(allow);
    auto got = run(x, w, g, true, true);
    // |b| adds no rounding: the bias is added in float32.
    expect_within_bf16_bound(got[0], ref[0], abs_op[0], "linear y");
    expect_within_bf16_bound(got[1], ref[1], abs_op[1], "linear dx");
    expect_within_bf16_bound(got[2], ref[2], abs_op[2], "linear dw");
    for (bool via_matmul : {false, true}) {
      auto m = run_mm(a, c, gm, true, via_matmul);
      expect_within_bf16_bound(m[0], ref_mm[0], abs_mm[0], "mm y");
      expect_within_bf16_bound(m[1], ref_mm[1], abs_mm[1], "mm da");
      expect_within_bf16_bound(m[2], ref_mm[2], abs_mm[2], "mm db");
    }
  }
}

// Double backward through a native linear: the backward falls back to the
// emulated (differentiable) products, so d/dw of |dL/dx|^2 matches float32
// within bf16 precision.
TEST(AutocastNative, LinearDoubleBackward) {
  manual_seed(14);
  Tensor x = randn({6, 20}), w = randn({7, 20}) * 0.3;
  auto run = [&](bool autocast) {
    Tensor xr = x.clone().requires_grad_(), wr = w.clone().requires_grad_();
    Tensor y;
    {
      AutocastGuard guard(autocast);
      y = linear(xr, wr, std::nullopt);
    }
    Tensor gx = autograd::grad({(y * y).sum()}, {xr}, {}, std::nullopt, true)[0];
    (gx * gx).sum().backward();
    return wr.grad();
  };
  Tensor ref = run(false);
  NativeBf16 allow(true);
  Tensor got = run(true);
  EXPECT_TRUE(allclose(got, ref, 3e-2, 3e-2 * ref.abs().max().item<float>()));
  EXPECT_FALSE(equal(got, ref));
}

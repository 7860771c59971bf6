// Integer arithmetic wraps modulo 2^bits as PyTorch's does (Note [integer
// wrap] in src/kernels/wrapping.h), and float-to-integer casts give x86
// PyTorch's values for NaN, infinities and out-of-range floats
// (include/ember/core/float_to_int.h): defined results where C++ has none,
// so an untrusted ONNX file cannot reach undefined behaviour. The expected
// numbers were printed by Debian's PyTorch 1.13:
//   torch.tensor([16]) * 4683743612465315839        -> 1152921504606846960
//   -m, m.abs(), m * -1 with m = tensor([-2**63])   -> -9223372036854775808 each
//   tensor([2**62, 2**62]).sum() / .cumsum(0)       -> -2**63 / [2**62, -2**63]
//   tensor([2**40, 2**40]).prod()                   -> 0
//   tensor([3], dtype=int32) ** 40                  -> 689956897
//   tensor([100], dtype=int8) * 3                   -> 44
//   tensor([-128], dtype=int8) // -1                -> -128
//   tensor([30000], dtype=int16) * 3                -> 24464
//   tensor([3], dtype=int16) ** 15                  -> -3477
//   -tensor([-32768], dtype=int16), .abs()          -> -32768 each
//   tensor([3e9, -3e9, 1e30, nan, inf, 300, -129, 70000]).to(d):
//     int64 [3000000000, -3000000000, min, min, min, 300, -129, 70000]
//     int32 [min, min, min, min, min, 300, -129, 70000]
//     int16 [0, 0, 0, 0, 0, 300, -129, 4464]
//     int8  [0, 0, 0, 0, 0, 44, 127, 112]
//     uint8 [0, 0, 0, 0, 0, 44, 127, 112]
// PyTorch dies of SIGFPE on int64 INT_MIN // -1 and % -1; Ember gives the
// wrapped quotient INT_MIN and remainder 0.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace ember;

namespace {
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();

std::vector<int64_t> longs(const Tensor& t) { return t.to(kInt64).to_vector<int64_t>(); }
}  // namespace

TEST(IntegerWrap, ArithmeticWrapsLikePyTorch) {
  EXPECT_EQ(longs(tensor<int64_t>({16}) * tensor<int64_t>({4683743612465315839})),
            std::vector<int64_t>{1152921504606846960});
  const Tensor m = tensor<int64_t>({kMin64});
  EXPECT_EQ(longs(-m), std::vector<int64_t>{kMin64});
  EXPECT_EQ(longs(abs(m)), std::vector<int64_t>{kMin64});
  EXPECT_EQ(longs(m * -1), std::vector<int64_t>{kMin64});
  EXPECT_EQ(longs(m - 1), std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(longs(floor_divide(m, -1)), std::vector<int64_t>{kMin64});
  EXPECT_EQ(longs(remainder(m, -1)), std::vector<int64_t>{0});
  EXPECT_EQ(longs(fmod(m, -1)), std::vector<int64_t>{0});
  const Tensor big = tensor<int64_t>({int64_t{1} << 62, int64_t{1} << 62});
  EXPECT_EQ(longs(big.sum()), std::vector<int64_t>{kMin64});
  EXPECT_EQ(longs(cumsum(big, 0)), (std::vector<int64_t>{int64_t{1} << 62, kMin64}));
  EXPECT_EQ(longs(tensor<int64_t>({int64_t{1} << 40, int64_t{1} << 40}).prod()), std::vector<int64_t>{0});
  EXPECT_EQ(longs(cumprod(tensor<int64_t>({int64_t{1} << 40, int64_t{1} << 40}), 0)),
            (std::vector<int64_t>{int64_t{1} << 40, 0}));
  EXPECT_EQ(longs(pow(tensor<int32_t>({3}), 40)), std::vector<int64_t>{689956897});
  EXPECT_EQ(longs(tensor<int8_t>({100}) * 3), std::vector<int64_t>{44});
  EXPECT_EQ(longs(floor_divide(tensor<int8_t>({-128}), -1)), std::vector<int64_t>{-128});
  EXPECT_EQ(longs(tensor<int16_t>({30000}) * 3), std::vector<int64_t>{24464});
  EXPECT_EQ(longs(pow(tensor<int16_t>({3}), 15)), std::vector<int64_t>{-3477});
  EXPECT_EQ(longs(-tensor<int16_t>({-32768})), std::vector<int64_t>{-32768});
  EXPECT_EQ(longs(abs(tensor<int16_t>({-32768}))), std::vector<int64_t>{-32768});
  // scatter_add accumulates with the same wrap.
  Tensor acc = tensor<int64_t>({std::numeric_limits<int64_t>::max()});
  acc = scatter_add(acc, 0, tensor<int64_t>({0}), tensor<int64_t>({1}));
  EXPECT_EQ(longs(acc), std::vector<int64_t>{kMin64});
}

TEST(IntegerWrap, FloatToIntegerCastsGivePyTorchsX86Values) {
  const Tensor x = tensor<float>({3e9f, -3e9f, 1e30f, NAN, INFINITY, 300.f, -129.f, 70000.f});
  constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(longs(x.to(kInt64)),
            (std::vector<int64_t>{3000000000, -3000000000, kMin64, kMin64, kMin64, 300, -129, 70000}));
  EXPECT_EQ(longs(x.to(kInt32)), (std::vector<int64_t>{kMin32, kMin32, kMin32, kMin32, kMin32, 300, -129, 70000}));
  EXPECT_EQ(longs(x.to(kInt16)), (std::vector<int64_t>{0, 0, 0, 0, 0, 300, -129, 4464}));
  EXPECT_EQ(longs(x.to(kInt8)), (std::vector<int64_t>{0, 0, 0, 0, 0, 44, 127, 112}));
  EXPECT_EQ(longs(x.to(kUInt8)), (std::vector<int64_t>{0, 0, 0, 0, 0, 44, 127, 112}));
  EXPECT_EQ(longs(x.to(kFloat64).to(kInt64)),
            (std::vector<int64_t>{3000000000, -3000000000, kMin64, kMin64, kMin64, 300, -129, 70000}));
  // A double scalar converts the same way where an integer is needed.
  EXPECT_EQ(Scalar(1e300).to<int64_t>(), kMin64);
  EXPECT_EQ(Scalar(NAN).to_long(), kMin64);
  EXPECT_EQ(Scalar(300.0).to<int8_t>(), 44);
  EXPECT_EQ(Scalar(70000.0).to<int16_t>(), 4464);
}

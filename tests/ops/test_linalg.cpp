// Matrix products: torch.matmul's shape rules, dtypes, strided inputs,
// addmm/linear, the oneDNN path against the reference GEMM, and every error.
// Expected values come from tests/data/gen_linalg.py (PyTorch 1.13).
#include <cmath>
#include <thread>

#include "ember/ember.h"
#include "kernels/linalg.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

Tensor ar(IntArrayRef shape, ScalarType dt = kFloat32) {
  return arange(compute_numel(shape), dt).view(shape);
}

// Max |x - y| relative to max |y|.
double rel_err(const Tensor& x, const Tensor& y) {
  std::vector<double> a = x.to_vector<double>(), b = y.to_vector<double>();
  EXPECT_EQ(a.size(), b.size());
  double num = 0, den = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return num / den;
}

}  // namespace

// ---- torch.matmul shape rules ----

TEST(LinalgMatmul, VectorVectorIsDot) {
  Tensor r = matmul(tensor<float>({1, 2, 3}), tensor<float>({4, 5, 6}));
  expect_values(r, {}, {32});
  expect_values(dot(tensor<float>({1, 2, 3}), tensor<float>({4, 5, 6})), {}, {32});
}

TEST(LinalgMatmul, VectorMatrixAndMatrixVector) {
  expect_values(matmul(tensor<float>({1, 2}), ar({2, 3})), {3}, {6, 9, 12});
  expect_values(matmul(ar({2, 3}), tensor<float>({1, 0, -1})), {2}, {-2, -2});
}

TEST(LinalgMatmul, BatchedBroadcasting) {
  // [2, 1, 2, 3] @ [3, 3, 2] -> [2, 3, 2, 2]
  expect_values(matmul(ar({2, 1, 2, 3}), ar({3, 3, 2})), {2, 3, 2, 2},
                {10, 13, 28, 40, 28, 31, 100, 112, 46, 49, 172, 184,
                 46, 67, 64, 94, 172, 193, 244, 274, 298, 319, 424, 454});
  expect_values(matmul(ar({3}), ar({2, 3, 2})), {2, 2}, {10, 13, 28, 31});
  expect_values(matmul(ar({2, 2, 3}), ar({3})), {2, 2}, {5, 14, 23, 32});
  expect_values(matmul(ar({2, 2, 3}), ar({3, 2})), {2, 2, 2}, {10, 13, 28, 40, 46, 67, 64, 94});
  // 2-D @ 3-D broadcasts the matrix over the batch.
  expect_values(matmul(ar({2, 3}), ar({2, 3, 2})), {2, 2, 2}, {10, 13, 28, 40, 28, 31, 100, 112});
  EXPECT_EQ(ar({2, 2, 3}).matmul(ar({3, 2})).sizes().vec(), (std::vector<int64_t>{2, 2, 2}));
}

TEST(LinalgMatmul, TransposedAndStridedInputs) {
  Tensor x = ar({3, 4});
  expect_values(x.t().mm(x), {4, 4},
                {80, 92, 104, 116, 92, 107, 122, 137, 104, 122, 140, 158, 116, 137, 158, 179});
  expect_values(mm(x.slice(1, 0, std::nullopt, 2), x.slice(0, 0, 2).slice(1, 1)), {3, 3},
                {10, 12, 14, 34, 44, 54, 58, 76, 94});
  Tensor w = ar({5, 4}) / 10;
  expect_values(matmul(x, w.t()), {3, 5},
                {1.4, 3.8, 6.2, 8.6, 11, 3.8, 12.6, 21.4, 30.2, 39, 6.2, 21.4, 36.6, 51.8, 67}, 1e-6,
                1e-5);
  expect_values(bmm(ar({2, 2, 3}), ar({2, 4, 3}).transpose(1, 2)), {2, 2, 4},
                {5, 14, 23, 32, 14, 50, 86, 122, 275, 338, 401, 464, 392, 482, 572, 662});
  // Neither dim unit-stride (every other row and column): copied, same values.
  Tensor big = ar({6, 8});
  Tensor s = big.slice(0, 0, std::nullopt, 2).slice(1, 0, std::nullopt, 2);  // [3, 4]
  EXPECT_LT(rel_err(mm(s, x.t()), mm(s.contiguous(), x.t().contiguous())), 1e-7);
  // A batch that is a permuted view (batch dim not outermost in memory).
  Tensor p = ar({2, 3, 4}).permute({1, 0, 2});  // [3, 2, 4]
  EXPECT_LT(rel_err(matmul(p, x.t()), matmul(p.contiguous(), x.t())), 1e-7);
}

TEST(LinalgMatmul, EmptyShapes) {
  EXPECT_EQ(mm(empty({0, 3}), empty({3, 2})).sizes().vec(), (std::vector<int64_t>{0, 2}));
  // k == 0: the sum over nothing is zero (torch.mm gives zeros too).
  expect_values(mm(empty({2, 0}), empty({0, 3})), {2, 3}, {0, 0, 0, 0, 0, 0});
  expect_values(addmm(ones({2, 2}), empty({2, 0}), empty({0, 2}), 3), {2, 2}, {3, 3, 3, 3});
  EXPECT_EQ(matmul(empty({0, 2, 3}), ar({3, 4})).sizes().vec(), (std::vector<int64_t>{0, 2, 4}));
}

// ---- dtypes ----

TEST(LinalgDtypes, BFloat16LooseTolerance) {
  Tensor a = (ar({4, 6}) / 7 - 1).to(kBFloat16), b = (ar({6, 3}) / 5 - 1.5).to(kBFloat16);
  Tensor r = mm(a, b);
  EXPECT_EQ(r.dtype(), kBFloat16);
  expect_values(r, {4, 3},
                {1.5, 0.71875, -0.03515625, 1.5, 1.75, 2.015625, 1.5, 2.8125, 4.0625, 1.46875,
                 3.84375, 6.125},
                1e-2, 1e-2);
  // Larger random case against float32 (bf16 keeps 8 bits of mantissa).
  Tensor x = randn({37, 129}), y = randn({129, 65});
  Tensor got = matmul(x.to(kBFloat16), y.to(kBFloat16).t().contiguous().t());
  Tensor want = matmul(x.to(kBFloat16).to(kFloat32), y.to(kBFloat16).to(kFloat32));
  EXPECT_LT(rel_err(got, want), 1e-2);
  Tensor h = matmul(x.to(kFloat16), y.to(kFloat16));
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_LT(rel_err(h, want), 5e-3);
}

TEST(LinalgDtypes, Float64IsExact) {
  Tensor a = tensor<double>({0.1, 0.2, 0.3, 0.4}, {2, 2});
  Tensor b = tensor<double>({1.0 / 3, 0.5, 0.25, 1e-8}, {2, 2});
  Tensor r = mm(a, b);
  EXPECT_EQ(r.dtype(), kFloat64);
  expect_values(r, {2, 2}, {0.08333333333333334, 0.050000002, 0.2, 0.150000004}, 1e-15, 0);
}

TEST(LinalgDtypes, Integers) {
  Tensor a = tensor<int64_t>({(int64_t{1} << 40) + 1, 3, -7, 11}, {2, 2});
  Tensor b = tensor<int64_t>({int64_t{1} << 20, 1, 5, -2}, {2, 2});
  Tensor r = mm(a, b);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.to_vector<int64_t>(),
            (std::vector<int64_t>{1152921504607895567, 1099511627771, -7339977, -29}));
  Tensor i32 = matmul(ar({2, 2, 3}, kInt32), ar({3, 2}, kInt32));
  EXPECT_EQ(i32.dtype(), kInt32);
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{10, 13, 28, 40, 46, 67, 64, 94}));
  // int8 wraps like torch: 100 * 2 + 100 = 300 = 44 (mod 256).
  Tensor i8 = mm(tensor<int8_t>({100, 100}, {1, 2}), tensor<int8_t>({2, 1}, {2, 1}));
  EXPECT_EQ(i8.to_vector<int8_t>(), (std::vector<int8_t>{44}));
}

// ---- addmm, linear, outer ----

TEST(LinalgAddmm, BetaAlphaAndBias) {
  expect_values(addmm(ar({2, 2}), ar({2, 3}), ar({3, 2}), 0.5, 2), {2, 2}, {20, 26.5, 57, 81.5});
  expect_values(addmm(tensor<float>({1, -1}), ar({2, 3}), ar({3, 2})), {2, 2}, {11, 12, 29, 39});
  expect_values(addmm(tensor<float>({1, -1}, {1, 2}), ar({2, 3}), ar({3, 2})), {2, 2},
                {11, 12, 29, 39});
  expect_values(addmm(tensor<float>({10, 20}, {2, 1}), ar({2, 3}), ar({3, 2}), 2), {2, 2},
                {30, 33, 68, 80});
  // beta == 0 ignores input, NaN included (BLAS semantics, as torch.addmm).
  Tensor nan = full({2, 2}, std::nan(""));
  expect_values(addmm(nan, ar({2, 3}), ar({3, 2}), 0), {2, 2}, {10, 13, 28, 40});
  // Integer addmm with integer beta/alpha.
  Tensor ri = addmm(ones({2, 2}, kInt64), ar({2, 3}, kInt64), ar({3, 2}, kInt64), 2, 3);
  EXPECT_EQ(ri.to_vector<int64_t>(), (std::vector<int64_t>{32, 41, 86, 122}));
}

TEST(LinalgLinear, WeightIsOutByIn) {
  expect_values(linear(ar({2, 3}), ar({4, 3}), tensor<float>({1, 2, 3, 4})), {2, 4},
                {6, 16, 26, 36, 15, 52, 89, 126});
  expect_values(linear(ar({2, 2, 3}), ar({4, 3}) - 5, tensor<float>({0.5, 0, -0.5, 1})), {2, 2, 4},
                {-9.5, -1, 7.5, 18, -45.5, -10, 25.5, 63, -81.5, -19, 43.5, 108, -117.5, -28, 61.5,
                 153});
  expect_values(linear(tensor<float>({1, 2, 3}), ar({2, 3})), {2}, {8, 26});
  // A non-contiguous input (transposed batch) and a broadcastable 0-dim bias.
  Tensor x = ar({3, 2, 4}).transpose(0, 1);  // [2, 3, 4]
  Tensor w = randn({5, 4});
  EXPECT_LT(rel_err(linear(x, w, scalar_tensor(1.5f)), matmul(x.contiguous(), w.t()) + 1.5), 1e-6);
}

TEST(LinalgOuter, PromotesLikeTorch) {
  Tensor r = outer(tensor<int64_t>({1, 2, 3}), tensor<float>({1.5, -1}));
  EXPECT_EQ(r.dtype(), kFloat32);
  expect_values(r, {3, 2}, {1.5, -1, 3, -2, 4.5, -3});
}

// ---- the oneDNN path against the reference GEMM ----

// Runs the registered kernel and matmul_ref on the same strided problem.
TEST(LinalgKernel, FastPathMatchesReference) {
  Generator gen(1234);
  for (ScalarType dt : {kFloat32, kBFloat16}) {
    for (int trial = 0; trial < 40; ++trial) {
      Tensor dims = randint(1, 70, {4}, kInt64, &gen);
      auto d = dims.to_vector<int64_t>();
      int64_t batch = trial % 3 == 0 ? 1 : d[3] % 4 + 1, m = d[0], k = d[1], n = d[2];
      bool ta = trial % 2, tb = (trial / 2) % 2, bcast_b = trial % 5 == 0, with_bias = trial % 4 == 1;
      // Transposed storage: build [.., cols, rows] and view it transposed.
      Tensor a = ta ? randn({batch, k, m}, dt, &gen).transpose(1, 2) : randn({batch, m, k}, dt, &gen);
      Tensor b = tb ? randn({bcast_b ? 1 : batch, n, k}, dt, &gen).transpose(1, 2)
                    : randn({bcast_b ? 1 : batch, k, n}, dt, &gen);
      Tensor bias = randn({n}, dt, &gen);
      Tensor c0 = randn({batch, m, n}, dt, &gen);
      double alpha = with_bias ? 1.0 : 0.5 + trial % 3, beta = trial % 3 == 2 ? 0.0 : 0.25 * (trial % 4);
      Tensor c_fast = c0.clone(), c_ref = c0.clone();
      auto args = [&](Tensor& c) {
        GemmArgs g;
        g.dtype = dt;
        g.batch = batch;
        g.m = m;
        g.n = n;
        g.k = k;
        g.a = {a.data_ptr(), batch == 1 ? 0 : a.stride(0), a.stride(1), a.stride(2)};
        g.b = {b.data_ptr(), bcast_b ? 0 : b.stride(0), b.stride(1), b.stride(2)};
        g.c = {c.data_ptr(), c.stride(0), c.stride(1), c.stride(2)};
        if (with_bias) g.bias = bias.data_ptr();
        g.alpha = alpha;
        g.beta = beta;
        return g;
      };
      run_matmul(args(c_fast), kCPU);
      matmul_ref(args(c_ref));
      double tol = dt == kFloat32 ? 1e-5 : 1e-2;
      EXPECT_LT(rel_err(c_fast, c_ref), tol)
          << to_string(dt) << " batch " << batch << " m " << m << " k " << k << " n " << n << " ta "
          << ta << " tb " << tb << " bias " << with_bias << " alpha " << alpha << " beta " << beta;
    }
  }
}

TEST(LinalgKernel, PublicOpsMatchFloat64Reference) {
  Generator gen(7);
  for (int trial = 0; trial < 12; ++trial) {
    auto d = randint(1, 200, {3}, kInt64, &gen).to_vector<int64_t>();
    Tensor a = randn({2, d[0], d[1]}, kFloat32, &gen), b = randn({d[1], d[2]}, kFloat32, &gen);
    Tensor got = matmul(a, trial % 2 ? b.t().contiguous().t() : b);
    Tensor want = matmul(a.to(kFloat64), b.to(kFloat64));
    EXPECT_LT(rel_err(got, want), 1e-5) << d[0] << "x" << d[1] << "x" << d[2];
  }
}

TEST(LinalgKernel, ConcurrentCallsShareCachedPrimitives) {
  Tensor a = randn({64, 48}), b = randn({48, 32});
  Tensor want = mm(a.to(kFloat64), b.to(kFloat64));
  std::vector<std::thread> threads;
  std::vector<double> errs(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) errs[t] = std::max(errs[t], rel_err(mm(a, b), want));
    });
  }
  for (auto& th : threads) th.join();
  for (double e : errs) EXPECT_LT(e, 1e-5);
}

// ---- errors ----

TEST(LinalgErrors, Shapes) {
  expect_error([] { mm(ones({2, 3}), ones({4, 5})); },
               {"mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"});
  expect_error([] { mm(ones({3}), ones({3, 2})); }, {"mm", "mat1", "2-D", "[3]"});
  expect_error([] { mm(ones({2, 3}), ones({3, 2, 1})); }, {"mm", "mat2", "2-D", "[3, 2, 1]"});
  expect_error([] { bmm(ones({2, 3}), ones({2, 3, 4})); }, {"bmm", "batch1", "3-D"});
  expect_error([] { bmm(ones({2, 2, 3}), ones({3, 3, 4})); },
               {"bmm", "batch size", "[2, 2, 3]", "[3, 3, 4]"});
  expect_error([] { bmm(ones({2, 2, 3}), ones({2, 4, 4})); },
               {"bmm", "cannot be multiplied", "[2, 2, 3]", "[2, 4, 4]"});
  expect_error([] { matmul(scalar_tensor(1.0f), ones({3})); }, {"matmul", "at least 1-D", "0-D"});
  expect_error([] { matmul(ones({3}), ones({4})); }, {"matmul", "cannot be multiplied", "1x3", "4x1"});
  expect_error([] { matmul(ones({2, 2, 3}), ones({4, 2})); },
               {"matmul", "[2, 2, 3]", "[4, 2]", "cannot be multiplied"});
  expect_error([] { matmul(ones({2, 2, 3}), ones({3, 3, 2})); },
               {"matmul", "[2, 2, 3]", "[3, 3, 2]", "broadcast"});
  expect_error([] { addmm(ones({3}), ones({2, 3}), ones({3, 4})); },
               {"addmm", "[3]", "cannot be broadcast", "[2, 4]"});
  expect_error([] { addmm(ones({2, 4}), ones({2, 3}), ones({2, 4})); },
               {"addmm", "cannot be multiplied (2x3 and 2x4)"});
  expect_error([] { linear(ones({2, 3}), ones({4, 5})); },
               {"linear", "[2, 3]", "[4, 5]", "in_features is 5"});
  expect_error([] { linear(ones({2, 3}), ones({3})); }, {"linear", "weight", "2-D"});
  expect_error([] { dot(ones({2, 2}), ones({2})); }, {"dot", "1-D"});
  expect_error([] { dot(ones({2}), ones({3})); }, {"dot", "[2]", "[3]"});
  expect_error([] { outer(ones({2, 1}), ones({3})); }, {"outer", "1-D"});
}

TEST(LinalgErrors, Dtypes) {
  expect_error([] { mm(ones({2, 2}), ones({2, 2}, kFloat64)); },
               {"mm: expected m1 and m2 to have the same dtype, but got: float32 != float64"});
  expect_error([] { matmul(ones({2, 2, 2}), ones({2, 2}, kInt64)); }, {"matmul", "float32 != int64"});
  expect_error([] { bmm(ones({1, 2, 2}, kBFloat16), ones({1, 2, 2})); },
               {"bmm", "bfloat16 != float32"});
  expect_error([] { addmm(ones({2}, kFloat64), ones({2, 2}), ones({2, 2})); },
               {"addmm", "float64 != float32"});
  expect_error([] { linear(ones({2, 2}), ones({2, 2}), ones({2}, kFloat64)); },
               {"linear", "bias", "float32 != float64"});
  expect_error([] { dot(ones({2}, kInt32), ones({2}, kInt64)); }, {"dot", "int32 != int64"});
  // Integer addmm casts floating beta and alpha to the dtype, as torch 1.13 does:
  // torch.addmm(o, o, o, beta=1, alpha=0.5) with o = torch.ones(2, 2, dtype=torch.long) is o;
  // beta=2.9, alpha=1.5 give 2 * 1 + 1 * 2 = 4. addr refuses them (torch.addr's error).
  const Tensor o = ones({2, 2}, kInt64);
  expect_values(addmm(o, o, o, 1, 0.5), {2, 2}, {1, 1, 1, 1});
  expect_values(addmm(o, o, o, 2.9, 1.5), {2, 2}, {4, 4, 4, 4});
  EXPECT_EQ(addmm(o, o, o, 2.9, 1.5).dtype(), kInt64);
  expect_error([&] { addr(o, ones({2}, kInt64), ones({2}, kInt64), 0.5); },
               {"addr", "argument beta must not be a floating point number"});
  EXPECT_THROW(mm(ones({2, 2}, kBool), ones({2, 2}, kBool)), TypeError);
}

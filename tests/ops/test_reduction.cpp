// Reductions, cumsum and softmax against PyTorch: expected values come from
// tests/data/gen_reduction.py (reduction_expected.txt) or closed forms.
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>

#include "ember/ember.h"
#include "kernels/cpu/vec_f32.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

namespace {

struct Expected {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

const std::map<std::string, Expected>& expected_table() {
  static const std::map<std::string, Expected> table = [] {
    std::map<std::string, Expected> t;
    std::ifstream f(std::string(EMBER_TEST_DATA_DIR) + "/reduction_expected.txt");
    std::string line;
    while (std::getline(f, line)) {
      auto parts = split(line, '|');
      if (parts.size() != 3) continue;
      Expected e;
      for (auto& s : split(parts[1], ','))
        if (!s.empty()) e.shape.push_back(std::stoll(s));
      for (auto& s : split(parts[2], ',')) e.values.push_back(std::stod(s));
      t[parts[0]] = e;
    }
    return t;
  }();
  return table;
}

// Compares t with the PyTorch result stored under `name`.
void expect_torch(const char* name, const Tensor& t, double rtol = 1e-5, double atol = 1e-5) {
  SCOPED_TRACE(name);
  auto it = expected_table().find(name);
  ASSERT_NE(it, expected_table().end()) << "no expected values named " << name;
  expect_values(t, it->second.shape, it->second.values, rtol, atol);
}

// The generator's X: 24 exact integers in [-5, 5], shape [2, 3, 4].
Tensor X(ScalarType dt = kFloat32) {
  return (remainder(arange(24) * 7, 11) - 5).to(dt).reshape({2, 3, 4});
}
Tensor Y() { return X() / 4; }

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const float kInfF = std::numeric_limits<float>::infinity();

}  // namespace

TEST(ReductionData, TableLoaded) { EXPECT_GE(expected_table().size(), 60u); }

TEST(ReductionSum, DimsKeepdimNegative) {
  Tensor x = X();
  expect_torch("sum_all", x.sum());
  EXPECT_EQ(x.sum().dim(), 0);
  expect_torch("sum_d1", x.sum({1}));
  expect_torch("sum_d02_keep", x.sum({0, 2}, true));
  expect_torch("sum_dneg1", x.sum({-1}));
  expect_torch("sum_d02_keep", sum(x, {-3, -1}, true));
  EXPECT_EQ(x.sum().dtype(), kFloat32);
}

TEST(ReductionSum, Dtypes) {
  // sum of int32 / bool -> int64 (torch rule); dtype= overrides.
  Tensor i = X(kInt32);
  EXPECT_EQ(i.sum().dtype(), kInt64);
  expect_torch("sum_d1", i.sum({1}));
  EXPECT_EQ(X(kInt64).sum({1}).dtype(), kInt64);
  EXPECT_EQ(i.sum({}, false, kInt32).dtype(), kInt32);
  Tensor b = tensor<bool>({true, false, true, true});
  EXPECT_EQ(b.sum().dtype(), kInt64);
  EXPECT_EQ(b.sum().item<int64_t>(), 3);
  EXPECT_EQ(X().sum({}, false, kFloat64).dtype(), kFloat64);
  expect_torch("sum_d1", X(kFloat64).sum({1}));
  // 16-bit floats accumulate in float: 4096 * 1.0 is exact although 4096+1
  // is not representable in bf16.
  Tensor h = ones({4096}, kBFloat16);
  EXPECT_EQ(h.sum().dtype(), kBFloat16);
  EXPECT_EQ(h.sum().item<double>(), 4096.0);
  EXPECT_EQ(ones({3000}, kFloat16).sum().item<double>(), 3000.0);
  expect_torch("sum_d1", X(kFloat16).sum({1}));
  expect_torch("mean_d2", Y().to(kBFloat16).mean({2}));
  EXPECT_EQ(Y().to(kFloat16).mean().dtype(), kFloat16);
}

TEST(ReductionSum, EmptyAndScalar) {
  // torch.zeros(0, 3).sum(0) == [0, 0, 0]; .prod(0) == [1, 1, 1].
  expect_values(zeros({0, 3}).sum({0}), {3}, {0, 0, 0});
  expect_values(zeros({0, 3}).prod(0), {3}, {1, 1, 1});
  expect_values(zeros({0, 3}).sum({1}), {0}, {});
  expect_values(zeros({0}).sum(), {}, {0});
  // torch.empty(0).mean() is nan.
  expect_values(zeros({0}).mean(), {}, {kNaN});
  // 0-dim: dim 0 and -1 are accepted.
  Tensor s = scalar_tensor(3.5);
  expect_values(s.sum({0}), {}, {3.5});
  expect_values(s.sum({-1}, true), {}, {3.5});
  auto [v, i] = s.max(0);
  expect_values(v, {}, {3.5});
  expect_values(i, {}, {0});
}

TEST(ReductionSum, LargeFastPathsMatchReference) {
  // Closed form: sum of 0..n-1 = n(n-1)/2, exact in float64 and within
  // float32 rounding for the float32 SIMD path.
  const int64_t n = 1 << 20;
  Tensor a = arange(n, kFloat64);
  EXPECT_EQ(a.sum().item<double>(), static_cast<double>(n) * (n - 1) / 2);
  Tensor f = arange(n, kFloat32);
  EXPECT_NEAR(f.sum().item<double>(), static_cast<double>(n) * (n - 1) / 2, 1e-6 * n * n / 2);
  // Rows and columns of [rows, cols] of ones: every output equals the count.
  Tensor o = ones({512, 3000});
  expect_values(o.sum({1}), {512}, std::vector<double>(512, 3000.0));
  expect_values(o.sum({0}), {3000}, std::vector<double>(3000, 512.0));
  expect_values(o.mean({0}), {3000}, std::vector<double>(3000, 1.0));
  // Few long columns (reduced axis split across threads).
  Tensor tall = ones({200000, 3});
  expect_values(tall.sum({0}), {3}, {200000, 200000, 200000});
  // Middle dim of a contiguous tensor: [outer, reduce, inner] in place.
  Tensor mid = ones({3, 50000, 2});
  expect_values(mid.sum({1}), {3, 2}, std::vector<double>(6, 50000.0));
  // Long row split across threads: int64 exact.
  EXPECT_EQ(arange(1 << 21).sum().item<int64_t>(), (int64_t(1) << 21) * ((int64_t(1) << 21) - 1) / 2);
  // vec::sum_f32 (SIMD) against a plain loop on the same data.
  Tensor r = rand({100003});
  std::vector<float> v = r.to_vector<float>();
  double ref = 0;
  for (float e : v) ref += e;
  EXPECT_NEAR(r.sum().item<double>(), ref, 1e-4 * std::abs(ref));
  EXPECT_NEAR(vec::sum_f32(v.data(), static_cast<int64_t>(v.size())), ref, 1e-3 * std::abs(ref));
}

TEST(ReductionMean, ValuesAndIntegerError) {
  expect_torch("mean_all", Y().mean());
  expect_torch("mean_d2", Y().mean({2}));
  expect_torch("mean_d01", Y().mean({0, 1}));
  expect_error([] { X(kInt64).mean(); },
               {"mean(): could not infer output dtype", "floating point", "Got: Long"});
  expect_error([] { X(kInt32).mean({0}); }, {"mean()", "Got: Int"});
}

TEST(ReductionProd, Values) {
  expect_torch("prod_d2", X().prod(2));
  expect_torch("prod_d0", Y().prod(0));
  EXPECT_EQ(X(kInt32).prod().dtype(), kInt64);
  EXPECT_EQ(tensor<bool>({true, true}).prod().dtype(), kInt64);
  // prod of [1..10] = 10!
  EXPECT_EQ(arange(1, 11).prod().item<int64_t>(), 3628800);
}

TEST(ReductionMax, AmaxAminAndPairs) {
  Tensor x = X();
  expect_torch("amax_d1", amax(x, {1}));
  expect_torch("amin_d02", amin(x, {0, 2}));
  auto [v, i] = x.max(2);
  expect_torch("max_d2_values", v);
  expect_torch("max_d2_indices", i);
  EXPECT_EQ(i.dtype(), kInt64);
  auto [v0, i0] = x.min(0);
  expect_torch("min_d0_values", v0);
  expect_torch("min_d0_indices", i0);
  auto [vk, ik] = x.max(-1, true);
  EXPECT_EQ(vk.sizes().vec(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(ik.sizes().vec(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(x.max().item<double>(), 5.0);
  EXPECT_EQ(x.min().item<double>(), -5.0);
  // Integer and bool dtypes keep their dtype.
  EXPECT_EQ(amax(X(kInt32), {1}).dtype(), kInt32);
  expect_torch("amax_d1", amax(X(kInt32), {1}));
  expect_torch("amax_d1", amax(X(kFloat64), {1}));
  expect_torch("amax_d1", amax(X(kBFloat16), {1}));
  EXPECT_TRUE(tensor<bool>({false, true}).max().item<bool>());
}

TEST(ReductionMax, FirstOccurrenceAndNaN) {
  // Ties: the first index wins (torch.tensor([1., 3., 3.]).argmax() == 1).
  Tensor t = tensor<float>({1, 3, 3, 0});
  EXPECT_EQ(t.argmax().item<int64_t>(), 1);
  EXPECT_EQ(tensor<float>({2, 0, 0}).argmin().item<int64_t>(), 1);
  // NaN propagates: torch.tensor([1, nan, 3]).max(0) == (nan, 1).
  Tensor n = tensor<float>({1, static_cast<float>(kNaN), 3});
  EXPECT_TRUE(std::isnan(n.max().item<double>()));
  EXPECT_TRUE(std::isnan(n.min().item<double>()));
  auto [v, i] = n.max(0);
  EXPECT_TRUE(std::isnan(v.item<double>()));
  EXPECT_EQ(i.item<int64_t>(), 1);
  EXPECT_EQ(n.argmin().item<int64_t>(), 1);
  // NaN in a long float32 row (SIMD path) and in columns (outer path).
  Tensor big = zeros({1000});
  big.narrow(0, 777, 1).fill_(kNaN);
  EXPECT_TRUE(std::isnan(amax(big).item<double>()));
  EXPECT_TRUE(std::isnan(amin(big).item<double>()));
  Tensor cols = zeros({64, 40});
  cols.narrow(0, 10, 1).narrow(1, 3, 1).fill_(kNaN);
  std::vector<double> want(40, 0.0);
  want[3] = kNaN;
  expect_values(amax(cols, {0}), {40}, want);
  expect_values(amin(cols, {0}), {40}, want);
  expect_values(cols.max(0).first, {40}, want);
}

TEST(ReductionMax, ArgmaxArgmin) {
  Tensor x = X();
  expect_torch("argmax_all", x.argmax());
  expect_torch("argmin_d1", x.argmin(1));
  expect_torch("argmax_d1_keep", x.argmax(1, true));
  // argmax(keepdim=True) with no dim keeps every dim as 1 (torch: [1, 1, 1]).
  EXPECT_EQ(x.argmax(std::nullopt, true).sizes().vec(), (std::vector<int64_t>{1, 1, 1}));
}

TEST(ReductionMax, EmptyErrors) {
  expect_error([] { zeros({0, 3}).max(); },
               {"max(): Expected reduction dim to be specified for input.numel() == 0"});
  expect_error([] { zeros({0, 3}).argmax(); }, {"argmax()", "numel() == 0"});
  expect_error([] { amax(zeros({0, 3}), {0}); },
               {"amax(): Expected reduction dim 0 to have non-zero size"});
  expect_error([] { zeros({0, 3}).max(0); }, {"max(): Expected reduction dim 0 to have non-zero size"});
  // Reducing a non-empty dim of an empty tensor is fine: torch.empty(0, 3).amax(1) -> [].
  expect_values(amax(zeros({0, 3}), {1}), {0}, {});
}

TEST(ReductionVar, CorrectionAndStd) {
  Tensor y = Y();
  expect_torch("var_all", y.var());
  expect_torch("var_d1", y.var(std::vector<int64_t>{1}));
  expect_torch("var_d2_c0", y.var(std::vector<int64_t>{2}, 0));
  expect_torch("var_d1_c2", var(y, {1}, 2));
  expect_torch("std_d0", y.std(std::vector<int64_t>{0}));
  expect_torch("std_d12_keep", ember::std(y, {1, 2}, 1, true));
  auto [v, m] = var_mean(y, {2});
  expect_torch("var_mean_d2_var", v);
  expect_torch("var_mean_d2_mean", m);
  expect_torch("var_d1", Y().to(kFloat64).var(std::vector<int64_t>{1}), 1e-7, 1e-7);  // expected is float32
  // Closed form: var of 0..n-1 (unbiased) = n(n+1)/12.
  const int64_t n = 100001;
  EXPECT_NEAR(arange(n, kFloat64).var().item<double>(), n * (n + 1) / 12.0, 1e-6 * n * n);
  // One element with correction 1: 0/0 = nan; empty: nan.
  EXPECT_TRUE(std::isnan(tensor<float>({2}).var().item<double>()));
  EXPECT_TRUE(std::isnan(zeros({0}).var().item<double>()));
  expect_error([] { X(kInt64).var(); }, {"var", "floating point", "int64"});
}

TEST(ReductionLogsumexp, StableAndInfinities) {
  expect_torch("logsumexp_d2", Y().logsumexp({2}));
  expect_torch("logsumexp_d01", Y().logsumexp({0, 1}));
  // Large values do not overflow: logsumexp([1000, 1000]) = 1000 + log 2.
  expect_values(tensor<float>({1000, 1000}).logsumexp({0}), {}, {1000 + std::log(2.0)}, 1e-6);
  // torch: [-inf, -inf] -> -inf; [inf, -inf] -> inf; empty -> -inf.
  expect_values(tensor<float>({-kInfF, -kInfF}).logsumexp({0}), {}, {-kInf});
  expect_values(tensor<float>({kInfF, -kInfF}).logsumexp({0}), {}, {kInf});
  expect_values(zeros({0}).logsumexp({0}), {}, {-kInf});
  // Integers promote to float32 like torch.
  EXPECT_EQ(X(kInt32).logsumexp({0}).dtype(), kFloat32);
}

TEST(ReductionNorm, Orders) {
  Tensor y = Y();
  expect_torch("norm2_all", y.norm());
  expect_torch("norm1_d1", y.norm(1, {1}));
  expect_torch("norminf_d2", y.norm(kInf, {2}));
  expect_torch("norm0_d0", X().norm(0, {0}));
  expect_torch("norm3_d2", y.norm(3, {2}));
  expect_torch("norm_half_all", y.norm(0.5));
  // Closed form: ||(3, 4)|| = 5.
  EXPECT_NEAR(tensor<float>({3, 4}).norm().item<double>(), 5.0, 1e-6);
  expect_error([] { X(kInt64).norm(); }, {"norm(): input dtype should be either floating point", "Long"});
}

TEST(ReductionLogical, AllAny) {
  Tensor x = X();
  expect_torch("all_d2", all(x != 0, {2}));
  expect_torch("any_d0", any(x > 4, {0}));
  EXPECT_EQ(all(x).dtype(), kBool);
  EXPECT_FALSE(all(x).item<bool>());  // X contains zeros
  EXPECT_TRUE(any(x).item<bool>());
  EXPECT_TRUE(ones({5}).all().item<bool>());
  EXPECT_FALSE(zeros({5}, kInt32).any().item<bool>());
  // Empty: all() is true, any() is false (torch).
  EXPECT_TRUE(zeros({0}).all().item<bool>());
  EXPECT_FALSE(zeros({0}).any().item<bool>());
}

TEST(ReductionCumsum, ValuesAndDtypes) {
  expect_torch("cumsum_d1", X().cumsum(1));
  expect_torch("cumsum_d2", Y().cumsum(-1));
  EXPECT_EQ(X(kInt32).cumsum(0).dtype(), kInt64);
  expect_torch("cumsum_d1", X(kInt32).cumsum(1));
  EXPECT_EQ(cumsum(X(), 0, kFloat64).dtype(), kFloat64);
  expect_values(tensor<bool>({true, false, true}).cumsum(0), {3}, {1, 1, 2});
  expect_values(zeros({0, 2}).cumsum(0), {0, 2}, {});
  expect_values(scalar_tensor(2.0).cumsum(0), {}, {2});
  expect_error([] { X().cumsum(3); }, {"cumsum", "dimension out of range", "[-3, 2]", "3"});
}

TEST(ReductionSoftmax, ValuesAndStability) {
  expect_torch("softmax_d2", Y().softmax(2));
  expect_torch("softmax_d0", Y().softmax(0));
  expect_torch("log_softmax_d1", Y().log_softmax(1));
  expect_torch("log_softmax_d2", Y().log_softmax(-1));
  expect_torch("softmax_d2", Y().to(kFloat64).softmax(2), 1e-6, 1e-7);  // expected is float32
  expect_torch("softmax_d2", Y().to(kBFloat16).softmax(2), 1e-2, 1e-2);
  // Large logits do not overflow; -inf (masked) entries get probability 0.
  expect_values(tensor<float>({1000, 1000}).softmax(0), {2}, {0.5, 0.5});
  expect_values(tensor<float>({0, -kInfF, 0}).softmax(0), {3}, {0.5, 0, 0.5});
  expect_values(tensor<float>({0, -kInfF, 0}).log_softmax(0), {3}, {-std::log(2.0), -kInf, -std::log(2.0)});
  // Long float32 rows (SIMD path) against a double reference.
  Tensor r = randn({3, 1001});
  Tensor ref = r.to(kFloat64).softmax(1);
  EXPECT_TRUE(allclose(r.softmax(1).to(kFloat64), ref, 1e-5, 1e-7));
  EXPECT_TRUE(allclose(r.log_softmax(1).to(kFloat64), r.to(kFloat64).log_softmax(1), 1e-5, 1e-5));
  expect_values(scalar_tensor(2.0).softmax(0), {}, {1});
  expect_error([] { X(kInt64).softmax(0); }, {"softmax", "floating-point", "int64"});
}

TEST(ReductionStrided, TransposedSlicedExpanded) {
  Tensor xt = X().transpose(0, 2);  // [4, 3, 2], dense but not contiguous
  expect_torch("t_sum_d0", xt.sum({0}));
  expect_torch("t_sum_d2", xt.sum({2}));
  expect_torch("t_sum_d02", xt.sum({0, 2}));
  expect_torch("t_amax_d1", amax(xt, {1}));
  expect_torch("t_var_d0", (xt / 4).var(std::vector<int64_t>{0}));
  expect_torch("t_argmax_d0", xt.argmax(0));
  expect_torch("t_cumsum_d0", xt.cumsum(0));
  expect_torch("t_softmax_d0", (xt / 4).softmax(0));
  Tensor xs = X().slice(1, 0, std::nullopt, 2).slice(2, 1);  // x[:, ::2, 1:]
  expect_torch("s_sum_d2", xs.sum({2}));
  expect_torch("s_mean_d0", (xs / 4).mean({0}));
  auto [v, i] = xs.max(1);
  expect_torch("s_max_d1_values", v);
  expect_torch("s_max_d1_indices", i);
  Tensor xe = X()[0][0].expand({3, 4});  // stride 0
  expect_torch("e_sum_d0", xe.sum({0}));
  expect_torch("e_prod_d1", xe.prod(1));
  Tensor xp = X().permute({2, 0, 1});
  expect_torch("p_sum_d1", xp.sum({1}));
  expect_torch("p_sum_d12", xp.sum({1, 2}));
}

TEST(ReductionStrided, LargerOuterInner) {
  Tensor big = (remainder(arange(300 * 257) * 13, 101) - 50).to(kFloat64).reshape({300, 257});
  expect_torch("big_sum_d0", big.sum({0}), 1e-12, 1e-9);
  expect_torch("big_sum_d1", big.sum({1}), 1e-12, 1e-9);
  expect_torch("big_var_d0", big.var(std::vector<int64_t>{0}), 1e-10, 1e-9);
  expect_torch("big_lse_d1", (big / 25).logsumexp({1}), 1e-10, 1e-9);
  expect_torch("big_amax_d0", amax(big, {0}));
  // Same through the float32 paths and the transposed (outer) layout.
  expect_torch("big_sum_d0", big.to(kFloat32).sum({0}), 1e-6, 1e-3);
  expect_torch("big_sum_d0", big.t().contiguous().sum({1}), 1e-12, 1e-9);
  expect_torch("big_sum_d1", big.t().sum({0}), 1e-12, 1e-9);
}

TEST(ReductionErrors, DimsAndDuplicates) {
  Tensor x = X();
  expect_error([&] { x.sum({3}); }, {"sum", "dimension out of range", "[-3, 2]", "got 3"});
  expect_error([&] { x.mean({-4}); }, {"mean", "[-3, 2]", "got -4"});
  expect_error([&] { amax(x, {5}); }, {"amax", "[-3, 2]"});
  expect_error([&] { x.max(3); }, {"max", "[-3, 2]"});
  expect_error([&] { x.argmax(-5); }, {"argmax", "[-3, 2]"});
  expect_error([&] { x.softmax(3); }, {"softmax", "[-3, 2]"});
  expect_error([&] { x.sum({1, -2}); }, {"sum", "dim 1 appears multiple times in the list of dims"});
  expect_error([&] { x.var(std::vector<int64_t>{0, 0}); }, {"var", "dim 0 appears multiple times"});
  // The dim error is an IndexError, like torch.
  EXPECT_THROW(x.sum({7}), IndexError);
}

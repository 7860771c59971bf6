// Core: dtypes, promotion, storage sharing, version counter, devices.
#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::testing::expect_values;

TEST(ScalarType, PromotionMatchesTorchPromoteTypes) {
  // Values from torch.promote_types (PyTorch 1.13).
  EXPECT_EQ(promote_types(kInt32, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kInt8, kInt64), kInt64);
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt16);
  EXPECT_EQ(promote_types(kInt16, kUInt8), kInt16);
  EXPECT_EQ(promote_types(kInt16, kInt8), kInt16);
  EXPECT_EQ(promote_types(kInt16, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt16, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kInt16, kBool), kInt16);
  EXPECT_EQ(element_size(kInt16), 2u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
}

TEST(ScalarType, PythonScalarRules) {
  Tensor i = tensor<int64_t>({1, 2, 3});
  Tensor f = tensor<float>({1, 2, 3});
  Tensor i32 = tensor<int32_t>({1, 2});
  EXPECT_EQ((i * 2.5).dtype(), kFloat32);  // int tensor * float scalar -> default float
  EXPECT_EQ((f * 2).dtype(), kFloat32);    // float tensor * int scalar stays float32
  EXPECT_EQ((i32 * 2).dtype(), kInt32);    // int32 * int scalar stays int32
  EXPECT_EQ((i / 2).dtype(), kFloat32);    // true division
  EXPECT_EQ((tensor<bool>({true}) + 1).dtype(), kInt64);
  // A 0-dim float64 tensor only raises the category: float32 tensor stays float32.
  EXPECT_EQ((f + scalar_tensor(1.0, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((i + scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  expect_values(i * 2.5, {3}, {2.5, 5.0, 7.5});
}

TEST(Half, RoundTripAndRounding) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(static_cast<float>(Half(v)), v) << v;
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between two bf16 values: rounds to even (1.0).
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
}

TEST(Tensor, ViewsShareStorageAndVersion) {
  Tensor a = zeros({2, 3});
  Tensor v = a.view({3, 2});
  Tensor row = a[1];
  uint32_t v0 = a.version();
  row.fill_(7);
  EXPECT_EQ(a.version(), v0 + 1);
  EXPECT_EQ(v.version(), a.version());
  expect_values(a, {2, 3}, {0, 0, 0, 7, 7, 7});
  expect_values(v, {3, 2}, {0, 0, 0, 7, 7, 7});
  a.add_(1);
  EXPECT_EQ(row.version(), v0 + 2);
}

TEST(Tensor, UndefinedHandleErrors) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  expect_error([&] { (void)t.sizes(); }, {"undefined Tensor"});
}

TEST(Device, CudaInCpuBuildIsAClearError) {
  EXPECT_EQ(Device("cuda:1").index(), 1);
  EXPECT_EQ(Device("cpu").str(), "cpu");
  expect_error([] { (void)zeros({2}, Device("cuda")); }, {"built without CUDA support"});
  expect_error([] { (void)zeros({2}).to(Device("cuda:0")); }, {"built without CUDA support"});
  expect_error([] { (void)Device("tpu"); }, {"Device", "tpu"});
  EXPECT_TRUE(zeros({1}).device().is_cpu());
}

TEST(Allocator, ReusesFreedBlocks) {
  auto before = cpu_allocator_stats();
  for (int i = 0; i < 10; ++i) (void)empty({100000});  // above the per-thread cache
  auto after = cpu_allocator_stats();
  EXPECT_GE(after.cache_hits - before.cache_hits, 9u);
  Tensor t = empty({17});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % kCpuAlignment, 0u);
}

// Storages of up to 32 bytes live inside the StorageImpl (16-byte aligned),
// so scalar ops never touch the allocator.
TEST(Allocator, TinyTensorsStayInline) {
  auto inside_storage = [](const Tensor& t) {
    auto* obj = reinterpret_cast<const char*>(t.storage().get());
    auto* p = static_cast<const char*>(t.data_ptr());
    return p >= obj && p + t.nbytes() <= obj + sizeof(StorageImpl);
  };
  Tensor s = full({8}, 2.5f);
  Tensor d = empty({4}, kFloat64);
  Tensor big = empty({9});  // 36 bytes: from the allocator
  EXPECT_TRUE(inside_storage(s));
  EXPECT_TRUE(inside_storage(d));
  EXPECT_FALSE(inside_storage(big));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data_ptr()) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.data_ptr()) % 16, 0u);
  EXPECT_EQ(s.sum().item<float>(), 20.0f);
  Tensor v = s.narrow(0, 2, 3);  // a view shares the inline bytes
  v.fill_(1.0f);
  EXPECT_EQ(s.sum().item<float>(), 15.5f);  // 5 x 2.5 + 3 x 1
}

TEST(Generator, SeedsAndStateRoundTrip) {
  manual_seed(42);
  Tensor a = rand({5});
  manual_seed(42);
  Tensor b = rand({5});
  EXPECT_TRUE(equal(a, b));
  Generator g(7);
  Tensor state = g.get_state();
  Tensor x = randn({100}, {}, &g);
  g.set_state(state);
  Tensor y = randn({100}, {}, &g);
  EXPECT_TRUE(equal(x, y));
  Tensor z = randn({100}, {}, &g);
  EXPECT_FALSE(equal(y, z));
}

TEST(Generator, PhiloxKnownAnswer) {
  // Random123 known-answer test for philox4x32-10: key (0, 0), counter 0.
  auto r = philox4x32(0, 0);
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(Generator, DistributionMoments) {
  Generator g(123);
  Tensor n = randn({200000}, kFloat64, &g);
  std::vector<double> v = n.to_vector<double>();
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  double var = sq / static_cast<double>(v.size());
  EXPECT_NEAR(mean, 0.0, 0.01);  // 4.5 standard errors
  EXPECT_NEAR(var, 1.0, 0.015);
  Tensor u = rand({100000}, kFloat32, &g);
  for (float x : u.to_vector<float>()) ASSERT_TRUE(x >= 0.0f && x < 1.0f);
  Tensor p = randperm(50, {}, &g);
  std::vector<int64_t> pv = p.to_vector<int64_t>();
  std::sort(pv.begin(), pv.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(pv[i], i);
  Tensor ri = randint(3, 7, {1000}, {}, &g);
  for (int64_t x : ri.to_vector<int64_t>()) ASSERT_TRUE(x >= 3 && x < 7);
}

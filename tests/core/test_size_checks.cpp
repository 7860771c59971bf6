// Note [size checks]: every size product is overflow-checked centrally, and no
// tensor's layout may reach outside its storage.
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;

namespace {
constexpr int64_t kBig = int64_t{1} << 40;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
}  // namespace

TEST(CoreSizeChecks, EmptyRefusesShapesWhoseElementCountOverflows) {
  // 2^40 * 2^40 wraps to 0 in int64: before the check this allocated 0 bytes
  // and returned a tensor claiming 2^80 elements.
  expect_error([] { (void)empty({kBig, kBig}); }, {"empty", "[1099511627776, 1099511627776]", "overflows"});
  expect_error([] { (void)empty({kBig, kBig, 0}); }, {"overflows"});
  expect_error([] { (void)empty({3, -2}); }, {"empty", "non-negative", "[3, -2]"});
}

TEST(CoreSizeChecks, EmptyRefusesByteCountsThatOverflow) {
  // 2^61 elements fit int64, but 2^61 * 8 bytes does not.
  expect_error([] { (void)empty({int64_t{1} << 61}, kFloat64); },
               {"empty", "[2305843009213693952]", "float64", "x 8 bytes", "overflows int64 bytes"});
}

TEST(CoreSizeChecks, ValidShapesStillWork) {
  Tensor t = empty({0, kBig}, kFloat32);  // empty, strides representable
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{kBig, 1}));
  Tensor z = zeros({3, 0, 2, 0});
  EXPECT_EQ(z.strides().vec(), (std::vector<int64_t>{2, 2, 1, 1}));
  Tensor s = empty({});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(ones({2, 3}).sum().item<float>(), 6.0f);
}

TEST(CoreSizeChecks, ComputeNumelAndNbytesCheckOverflow) {
  EXPECT_EQ(compute_numel({2, 3, 4}), 24);
  EXPECT_EQ(compute_numel({2, 0, 4}), 0);
  EXPECT_EQ(compute_nbytes({2, 3}, kFloat64), 48u);
  expect_error([] { (void)compute_numel({kBig, kBig}); }, {"overflows"});
  expect_error([] { (void)compute_nbytes({kMax / 2}, kInt32, "loader"); }, {"loader", "int32", "overflows"});
  expect_error([] { (void)compute_numel({-1}); }, {"non-negative"});
}

TEST(CoreSizeChecks, StridedExtentIsOverflowChecked) {
  EXPECT_EQ(compute_strided_nbytes({2, 3}, {3, 1}, 0, kFloat32), 24u);
  EXPECT_EQ(compute_strided_nbytes({2, 3}, {3, 1}, 4, kFloat32), 40u);
  EXPECT_EQ(compute_strided_nbytes({2, 0}, {kMax, 1}, 0, kFloat32), 0u);
  EXPECT_EQ(compute_strided_nbytes({4}, {0}, 0, kFloat32), 4u);  // broadcast stride
  expect_error([] { (void)compute_strided_nbytes({3}, {kMax / 2 + 1}, 0, kFloat32, "probe"); },
               {"probe", "extent overflows"});
  expect_error([] { (void)compute_strided_nbytes({2}, {1}, -1, kFloat32, "probe"); }, {"probe", "negative"});
}

TEST(CoreSizeChecks, AsStridedCannotWrapAroundTheStorage) {
  Tensor base = arange(10, kFloat32);
  // (2 - 1) * (2^63 - 1) + offset 1 wraps to a negative max index: before the
  // overflow check this passed the bound and addressed memory 2^63 elements away.
  expect_error([&] { (void)base.as_strided({2}, {kMax}, 1); }, {"as_strided"});
  expect_error([&] { (void)base.as_strided({3}, {kMax / 2 + 1}, 0); }, {"as_strided", "overflows"});
  expect_error([&] { (void)base.as_strided({2, 2}, {5, 5}, 0); }, {"as_strided", "storage holds only 10"});
  Tensor ok = base.as_strided({3, 3}, {3, 1}, 1);
  EXPECT_EQ(ok.select(0, 2).to_vector<float>(), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(base.as_strided({0, 5}, {kMax, 1}, 0).numel(), 0);
}

TEST(CoreSizeChecks, FromBlobChecksItsExtent) {
  std::vector<float> buf(6);
  Tensor t = from_blob(buf.data(), {2, 3});
  EXPECT_EQ(t.storage()->nbytes(), 24u);
  Tensor e = from_blob(buf.data(), {0, 3});
  EXPECT_EQ(e.numel(), 0);
  expect_error([&] { (void)from_blob(buf.data(), {kBig, kBig}); }, {"from_blob", "overflows"});
  expect_error([&] { (void)from_blob(buf.data(), {2, 2}, {kMax, 1}); }, {"from_blob", "overflows"});
  expect_error([&] { (void)empty_strided({2, 2}, {kMax, 1}); }, {"empty_strided", "overflows"});
}

TEST(CoreSizeChecks, NoTensorImplReachesOutsideItsStorage) {
  Tensor base = arange(6, kFloat32);
  // Views built directly on a TensorImpl (the path of view ops) are bounded too.
  expect_error([&] { (void)Tensor(make_intrusive<TensorImpl>(base.storage(), kFloat32, DimVector{2, 4},
                                                             DimVector{4, 1}, 0)); },
               {"reach outside the storage of 24 bytes (6 elements)"});
  expect_error([&] { (void)Tensor(make_intrusive<TensorImpl>(base.storage(), kFloat64, DimVector{4},
                                                             DimVector{1}, 0)); },
               {"float64", "outside the storage"});
  expect_error([&] { (void)Tensor(make_intrusive<TensorImpl>(base.storage(), kFloat32, DimVector{2},
                                                             DimVector{-1}, 0)); },
               {"outside the storage"});  // walks to index -1
  expect_error([&] { (void)Tensor(make_intrusive<TensorImpl>(base.storage(), kFloat32, IntArrayRef{7})); },
               {"outside the storage"});
  // Legitimate layouts pass: broadcast (stride 0), negative strides inside
  // the storage (flip's internal view), offsets.
  Tensor b(make_intrusive<TensorImpl>(base.storage(), kFloat32, DimVector{3, 6}, DimVector{0, 1}, 0));
  EXPECT_EQ(b.numel(), 18);
  Tensor r(make_intrusive<TensorImpl>(base.storage(), kFloat32, DimVector{6}, DimVector{-1}, 5));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(flip(base.view({2, 3}), {0, 1}).to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
}

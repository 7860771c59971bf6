// Quantized tensors against PyTorch 1.13 (tests/data/gen_quant.py): integers,
// dequantized values and reprs of quantize_per_tensor / quantize_per_channel,
// rounding ties and clamping, choose_qparams and the weight observer.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/quant/qtensor.h"
#include "quant/quant_reference.h"

namespace ember {
namespace {

using testing::qmeta;
using testing::qref;

QDtype qdtype(const std::string& s) { return s == "qint8" ? kQInt8 : kQUInt8; }

void expect_equal(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], w[i]) << what << " at flat index " << i;
}

class PerTensor : public ::testing::TestWithParam<const char*> {};

TEST_P(PerTensor, IntegersDequantizedValuesAndReprEqualPyTorch) {
  const std::string k = std::string("pt.") + GetParam();
  const double scale = std::stod(qmeta(k + ".scale"));
  const int64_t zp = std::stoll(qmeta(k + ".zero_point"));
  const QDtype dt = qdtype(qmeta(k + ".dtype"));
  QTensor q = quantize_per_tensor(qref(k + ".x"), scale, zp, dt);
  EXPECT_EQ(q.dtype(), dt);
  EXPECT_EQ(q.qscheme(), QScheme::PerTensorAffine);
  EXPECT_EQ(q.int_repr().dtype(), underlying(dt));
  EXPECT_EQ(q.q_scale(), scale);
  EXPECT_EQ(q.q_zero_point(), zp);
  expect_equal(q.int_repr(), qref(k + ".int"), k + " int_repr");
  expect_equal(q.dequantize(), qref(k + ".deq"), k + " dequantize");
  EXPECT_EQ(q.str(), qmeta(k + ".repr"));
}

INSTANTIATE_TEST_SUITE_P(Quant, PerTensor,
                         ::testing::Values("ties_qint8", "ties_quint8", "clamp_qint8", "clamp_quint8", "random_quint8",
                                           "random_qint8"));

TEST(QTensor, TiesRoundHalfToEven) {
  // x / scale = -2.5, -1.5, -0.5, 0.5, 1.5, 2.5: to even, not away from zero.
  QTensor q = quantize_per_tensor(tensor<float>({-1.25f, -0.75f, -0.25f, 0.25f, 0.75f, 1.25f}), 0.5, 0, kQInt8);
  EXPECT_EQ(q.int_repr().to_vector<int64_t>(), (std::vector<int64_t>{-2, -2, 0, 0, 2, 2}));
  // The zero point is added after rounding: 10 + {-2, -2, 0, 0, 2, 2}.
  QTensor u = quantize_per_tensor(tensor<float>({-1.25f, -0.75f, -0.25f, 0.25f, 0.75f, 1.25f}), 0.5, 10, kQUInt8);
  EXPECT_EQ(u.int_repr().to_vector<int64_t>(), (std::vector<int64_t>{8, 8, 10, 10, 12, 12}));
}

TEST(QTensor, ClampsToTheDtypeRange) {
  QTensor q = quantize_per_tensor(tensor<float>({-1e30f, -200.0f, 200.0f, 1e30f}), 1.0, 0, kQInt8);
  EXPECT_EQ(q.int_repr().to_vector<int64_t>(), (std::vector<int64_t>{-128, -128, 127, 127}));
  QTensor u = quantize_per_tensor(tensor<float>({-1.0f, 300.0f}), 1.0, 0, kQUInt8);
  EXPECT_EQ(u.int_repr().to_vector<int64_t>(), (std::vector<int64_t>{0, 255}));
}

class PerChannel : public ::testing::TestWithParam<const char*> {};

TEST_P(PerChannel, IntegersDequantizedValuesAndReprEqualPyTorch) {
  const std::string k = std::string("pc.") + GetParam();
  const int64_t axis = std::stoll(qmeta(k + ".axis"));
  const QDtype dt = qdtype(qmeta(k + ".dtype"));
  QTensor q = quantize_per_channel(qref(k + ".x"), qref(k + ".scales"), qref(k + ".zero_points"), axis, dt);
  EXPECT_EQ(q.qscheme(), QScheme::PerChannelAffine);
  EXPECT_EQ(q.q_per_channel_axis(), axis);
  expect_equal(q.q_per_channel_scales(), qref(k + ".scales"), k + " scales");
  expect_equal(q.q_per_channel_zero_points(), qref(k + ".zero_points"), k + " zero points");
  expect_equal(q.int_repr(), qref(k + ".int"), k + " int_repr");
  expect_equal(q.dequantize(), qref(k + ".deq"), k + " dequantize");
  EXPECT_EQ(q.str(), qmeta(k + ".repr"));
}

INSTANTIATE_TEST_SUITE_P(Quant, PerChannel, ::testing::Values("w_axis0", "x_axis1"));

TEST(QTensor, ChooseQParamsEqualsPyTorch) {
  // rows: min, max, reduce_range, scale, zero_point (torch._choose_qparams_per_tensor).
  Tensor rows = qref("choose_qparams");
  for (int64_t i = 0; i < rows.size(0); ++i) {
    std::vector<double> r = rows[i].to_vector<double>();
    const bool reduce = r[2] != 0;
    quant::QParams p = quant::choose_qparams(static_cast<float>(r[0]), static_cast<float>(r[1]), 0, reduce ? 127 : 255);
    // PyTorch returns the scale as a double computed from float32 inputs.
    EXPECT_FLOAT_EQ(static_cast<float>(p.scale), static_cast<float>(r[3])) << "row " << i;
    EXPECT_EQ(p.zero_point, static_cast<int64_t>(r[4])) << "row " << i;
  }
}

TEST(QTensor, WeightObserverEqualsPyTorch) {
  QTensor q = quant::quantize_weight_per_channel(qref("obs.w"));
  Tensor want = qref("obs.scales");
  std::vector<double> got = q.q_per_channel_scales().to_vector<double>(), w = want.to_vector<double>();
  ASSERT_EQ(got.size(), w.size());
  // The observer's scale is float32; Ember's equals it exactly.
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(static_cast<float>(got[i]), static_cast<float>(w[i])) << i;
  expect_equal(q.q_per_channel_zero_points(), qref("obs.zero_points"), "observer zero points");
  expect_equal(q.int_repr(), qref("obs.int"), "observer int_repr");
  EXPECT_EQ(q.dtype(), kQInt8);
}

TEST(QTensor, AccessorsOfTheOtherSchemeAndBadParametersRaise) {
  QTensor pt = quantize_per_tensor(tensor<float>({1.0f}), 0.1, 0, kQInt8);
  testing::expect_error([&] { (void)pt.q_per_channel_scales(); }, {"per_channel_affine", "q_scale"});
  QTensor pc = quant::quantize_weight_per_channel(ones({2, 3}));
  testing::expect_error([&] { (void)pc.q_scale(); }, {"per_tensor_affine", "q_per_channel_scales"});
  testing::expect_error([&] { quantize_per_tensor(ones({2}), 0.0, 0, kQInt8); }, {"scale", "positive"});
  testing::expect_error([&] { quantize_per_tensor(ones({2}), 0.1, 200, kQInt8); }, {"zero_point 200", "qint8"});
  testing::expect_error([&] { quantize_per_tensor(ones({2}, kInt64), 0.1, 0, kQInt8); }, {"floating-point"});
  testing::expect_error([&] { quantize_per_channel(ones({2, 3}), ones({3}), zeros({3}, kInt64), 0, kQInt8); },
                        {"size 2"});
  testing::expect_error([&] { quantize_per_channel(ones({2, 3}), ones({2}), zeros({2}, kInt64), 2, kQInt8); },
                        {"axis 2"});
}

}  // namespace
}  // namespace ember

// ClassificationMetrics and RegressionMetrics against scikit-learn's
// definitions (labels=range(C), zero_division=0), written out with numpy in
// tests/data/gen_metrics.py since scikit-learn itself is not a dependency.
#include "ember/train/metrics.h"

#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::train::ClassificationMetrics;
using ember::train::RegressionMetrics;

namespace {

// gen_metrics.py's BATCH1 and BATCH2: 4 classes, class 3 never predicted,
// batch 1 sample 2 ties classes 0 and 2.
ClassificationMetrics two_batches(ScalarType dtype = kFloat32) {
  ClassificationMetrics m(4, {1, 2, 3});
  m.update(tensor<double>({2.0, 1.0, 0.5, 0.1,  //
                           0.2, 3.0, 0.1, 0.0,  //
                           1.0, 0.3, 1.0, 0.9,  //
                           0.1, 0.2, 2.5, 2.4},
                          {4, 4})
               .to(dtype),
           tensor<int64_t>({0, 1, 2, 3}), 0.5);
  m.update(tensor<double>({0.0, 1.5, 0.2, 0.3,  //
                           0.9, 0.1, 0.8, 0.7,  //
                           0.1, 0.3, 0.2, 0.0,  //
                           0.0, 0.1, 5.0, 0.2},
                          {4, 4})
               .to(dtype),
           tensor<int64_t>({1, 2, 0, 2}), 1.0);
  return m;
}

void expect_near_vec(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "at class " << i;
}

}  // namespace

// python3 tests/data/gen_metrics.py:
//   confusion = [[1, 1, 0, 0], [0, 2, 0, 0], [2, 0, 1, 0], [0, 0, 1, 0]]
//   accuracy = 0.5, loss = 0.75, top_k = {1: 0.5, 2: 0.875, 3: 1.0}
//   precision = [1/3, 2/3, 0.5, 0.0], recall = [0.5, 1.0, 1/3, 0.0]
//   f1 = [0.4, 0.8, 0.4, 0.0], support = [2, 2, 3, 1]
//   precision_macro = 0.375, recall_macro = 0.4583333333333333, f1_macro = 0.4
//   precision_weighted = 0.4375, recall_weighted = 0.5, f1_weighted = 0.45
TEST(TrainMetrics, ClassificationMatchesSklearnDefinitions) {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    ClassificationMetrics m = two_batches(dtype);
    EXPECT_EQ(m.count(), 8);
    EXPECT_EQ(m.num_classes(), 4);
    const std::vector<std::vector<int64_t>> confusion = {{1, 1, 0, 0}, {0, 2, 0, 0}, {2, 0, 1, 0}, {0, 0, 1, 0}};
    EXPECT_EQ(m.confusion(), confusion);
    EXPECT_DOUBLE_EQ(m.accuracy(), 0.5);
    EXPECT_DOUBLE_EQ(m.loss(), 0.75);  // (0.5 * 4 + 1.0 * 4) / 8
    EXPECT_DOUBLE_EQ(m.top_k_accuracy(1), 0.5);
    EXPECT_DOUBLE_EQ(m.top_k_accuracy(2), 0.875);
    EXPECT_DOUBLE_EQ(m.top_k_accuracy(3), 1.0);
    expect_near_vec(m.precision_per_class(), {1.0 / 3, 2.0 / 3, 0.5, 0.0});
    expect_near_vec(m.recall_per_class(), {0.5, 1.0, 1.0 / 3, 0.0});
    expect_near_vec(m.f1_per_class(), {0.4, 0.8, 0.4, 0.0});
    EXPECT_EQ(m.support(), (std::vector<int64_t>{2, 2, 3, 1}));
    EXPECT_NEAR(m.precision_macro(), 0.375, 1e-12);
    EXPECT_NEAR(m.recall_macro(), 0.4583333333333333, 1e-12);
    EXPECT_NEAR(m.f1_macro(), 0.4, 1e-12);
    EXPECT_NEAR(m.precision_weighted(), 0.4375, 1e-12);
    EXPECT_NEAR(m.recall_weighted(), 0.5, 1e-12);
    EXPECT_NEAR(m.f1_weighted(), 0.45, 1e-12);
  }
}

TEST(TrainMetrics, PerfectPrediction) {
  ClassificationMetrics m(3, {1, 2});
  m.update(tensor<float>({5, 0, 0, 0, 5, 0, 0, 0, 5, 5, 1, 1}, {4, 3}), tensor<int64_t>({0, 1, 2, 0}), 0.1);
  EXPECT_DOUBLE_EQ(m.accuracy(), 1.0);
  EXPECT_DOUBLE_EQ(m.top_k_accuracy(1), 1.0);
  EXPECT_DOUBLE_EQ(m.top_k_accuracy(2), 1.0);
  expect_near_vec(m.precision_per_class(), {1, 1, 1});
  expect_near_vec(m.recall_per_class(), {1, 1, 1});
  expect_near_vec(m.f1_per_class(), {1, 1, 1});
  EXPECT_DOUBLE_EQ(m.f1_macro(), 1.0);
  EXPECT_DOUBLE_EQ(m.f1_weighted(), 1.0);
  EXPECT_NEAR(m.loss(), 0.1, 1e-15);
}

// A class with neither true nor predicted samples counts as 0 in the macro
// mean (labels=range(C)) but has no weight in the weighted mean.
TEST(TrainMetrics, AbsentClassZeroDivision) {
  ClassificationMetrics m(3);
  // targets 0,0,1,1; predictions 0,1,1,1; class 2 never appears.
  m.update(tensor<float>({1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0}, {4, 3}), tensor<int64_t>({0, 0, 1, 1}));
  // precision [1, 2/3, 0], recall [0.5, 1, 0], f1 [2/3, 0.8, 0]
  expect_near_vec(m.precision_per_class(), {1.0, 2.0 / 3, 0.0});
  expect_near_vec(m.recall_per_class(), {0.5, 1.0, 0.0});
  expect_near_vec(m.f1_per_class(), {2.0 / 3, 0.8, 0.0});
  EXPECT_NEAR(m.precision_macro(), (1.0 + 2.0 / 3) / 3, 1e-12);
  EXPECT_NEAR(m.precision_weighted(), (1.0 + 2.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(m.recall_weighted(), 0.75, 1e-12);  // equals accuracy, as always
  EXPECT_NEAR(m.f1_macro(), (2.0 / 3 + 0.8) / 3, 1e-12);
  EXPECT_NEAR(m.f1_weighted(), (2.0 / 3 + 0.8) / 2, 1e-12);
}

TEST(TrainMetrics, EmptyAndReset) {
  ClassificationMetrics m(2, {1});
  EXPECT_EQ(m.accuracy(), 0.0);
  EXPECT_EQ(m.loss(), 0.0);
  EXPECT_EQ(m.top_k_accuracy(1), 0.0);
  EXPECT_EQ(m.f1_weighted(), 0.0);
  m.update(zeros({0, 2}), zeros({0}, kInt64));  // an empty batch is a no-op
  EXPECT_EQ(m.count(), 0);
  m.update(tensor<float>({0, 1}, {1, 2}), tensor<int64_t>({1}), 2.0);
  EXPECT_EQ(m.count(), 1);
  m.reset();
  EXPECT_EQ(m.count(), 0);
  EXPECT_EQ(m.loss(), 0.0);
  EXPECT_EQ(m.confusion(), (std::vector<std::vector<int64_t>>{{0, 0}, {0, 0}}));
}

// Ties go to the lower index (torch.argmax; torch.topk on CPU); NaN ranks
// above every number, as in torch.argmax.
TEST(TrainMetrics, TiesAndNaN) {
  ClassificationMetrics m(3, {1, 2});
  m.update(tensor<float>({1, 1, 1,  //
                          1, 1, 1,  //
                          0, NAN, 5},
                         {3, 3}),
           tensor<int64_t>({0, 2, 2}));
  // Row 0: pred 0 = target. Row 1: pred 0, target 2 has rank 2 (top-2 miss).
  // Row 2: pred 1 (NaN), target 2 has rank 1 (top-2 hit).
  EXPECT_EQ(m.confusion(), (std::vector<std::vector<int64_t>>{{1, 0, 0}, {0, 0, 0}, {1, 1, 0}}));
  EXPECT_DOUBLE_EQ(m.top_k_accuracy(1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.top_k_accuracy(2), 2.0 / 3);
}

TEST(TrainMetrics, TopKAtLeastNumClassesIsAlwaysCorrect) {
  ClassificationMetrics m(2, {2, 5});
  m.update(tensor<float>({3, 0, 3, 0}, {2, 2}), tensor<int64_t>({1, 1}));
  EXPECT_EQ(m.top_k_accuracy(2), 1.0);
  EXPECT_EQ(m.top_k_accuracy(5), 1.0);
  EXPECT_EQ(m.accuracy(), 0.0);
}

TEST(TrainMetrics, AcceptsLogitsThatRequireGrad) {
  ClassificationMetrics m(2);
  Tensor z = tensor<float>({0, 1}, {1, 2}, TensorOptions().requires_grad(true));
  m.update(z * 2, tensor<int64_t>({1}));
  EXPECT_EQ(m.accuracy(), 1.0);
}

TEST(TrainMetrics, ClassificationErrors) {
  expect_error([] { ClassificationMetrics(0); }, {"num_classes", "at least 1", "0"});
  expect_error([] { ClassificationMetrics(3, {1, 0}); }, {"top_k", "at least 1"});
  ClassificationMetrics m(3, {1});
  expect_error([&] { m.update(zeros({2, 4}), tensor<int64_t>({0, 1})); },
               {"ClassificationMetrics::update", "[B, 3]", "[2, 4]"});
  expect_error([&] { m.update(zeros({3}), tensor<int64_t>({0, 1, 2})); }, {"[B, 3]", "[3]"});
  expect_error([&] { m.update(zeros({2, 3}), tensor<int64_t>({0, 1, 2})); },
               {"targets", "[2]", "[2, 3]", "[3]"});
  expect_error([&] { m.update(zeros({2, 3}), tensor<int64_t>({0, 3})); },
               {"target 3", "index 1", "out of range", "num_classes = 3"});
  expect_error([&] { m.update(zeros({1, 3}), tensor<int64_t>({-1})); }, {"target -1", "out of range"});
  expect_error([&] { m.update(zeros({1, 3}), tensor<float>({0})); }, {"integer", "float32"});
  expect_error([&] { m.update(zeros({1, 3}, kInt64), tensor<int64_t>({0})); }, {"floating logits", "int64"});
  expect_error([&] { (void)m.top_k_accuracy(5); }, {"top_k_accuracy", "k = 5", "[1]"});
  // A rejected batch leaves the state untouched.
  EXPECT_EQ(m.count(), 0);
  EXPECT_EQ(m.support(), (std::vector<int64_t>{0, 0, 0}));
}

// python3 tests/data/gen_metrics.py: regression mse = 1.78125,
// mae = 1.0625, loss = 0.6875 (batch losses 0.25 x 3 samples, 2.0 x 1).
TEST(TrainMetrics, Regression) {
  RegressionMetrics m;
  m.update(tensor<float>({1.0, 2.0, 3.0, -1.0, 0.5, 0.0}, {3, 2}), tensor<float>({1.5, 2.0, 1.0, 0.0, 0.5, 2.0}, {3, 2}),
           0.25);
  m.update(tensor<double>({4.0, 4.0}, {1, 2}), tensor<double>({3.0, 6.0}, {1, 2}), 2.0);
  EXPECT_EQ(m.count(), 4);
  EXPECT_DOUBLE_EQ(m.mse(), 1.78125);
  EXPECT_DOUBLE_EQ(m.mae(), 1.0625);
  EXPECT_DOUBLE_EQ(m.loss(), 0.6875);
  m.reset();
  EXPECT_EQ(m.count(), 0);
  EXPECT_EQ(m.mse(), 0.0);
  EXPECT_EQ(m.mae(), 0.0);
  EXPECT_EQ(m.loss(), 0.0);
}

TEST(TrainMetrics, RegressionErrors) {
  RegressionMetrics m;
  expect_error([&] { m.update(zeros({3, 2}), zeros({3})); },
               {"RegressionMetrics::update", "equal shape", "[3, 2]", "[3]"});
  expect_error([&] { m.update(scalar_tensor(1.0), scalar_tensor(1.0)); }, {"batch dimension", "unsqueeze"});
  EXPECT_EQ(m.count(), 0);
}

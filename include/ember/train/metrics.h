// Evaluation metrics accumulated over batches: accuracy, top-k,
// precision/recall/F1 (per class, macro, weighted), the confusion matrix;
// MSE/MAE for regression. Definitions follow scikit-learn (a class with no
// predicted or no true samples contributes 0, as zero_division=0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::train {

class ClassificationMetrics {
 public:
  explicit ClassificationMetrics(int64_t num_classes, std::vector<int64_t> top_k = {});

  // logits [B, C] (any float dtype), targets int64 [B]. Loss is the batch's
  // mean loss; it is weighted by B in loss().
  void update(const Tensor& logits, const Tensor& targets, double mean_loss = 0.0);
  void reset();

  int64_t count() const { return count_; }
  int64_t num_classes() const { return num_classes_; }
  double loss() const;      // sample-weighted mean of the batch losses
  double accuracy() const;  // fraction in [0, 1]
  double top_k_accuracy(int64_t k) const;  // k must be one of top_k
  std::vector<double> precision_per_class() const;
  std::vector<double> recall_per_class() const;
  std::vector<double> f1_per_class() const;
  std::vector<int64_t> support() const;  // true samples per class
  double precision_macro() const;
  double recall_macro() const;
  double f1_macro() const;
  double precision_weighted() const;
  double recall_weighted() const;
  double f1_weighted() const;
  // confusion[true][predicted]
  const std::vector<std::vector<int64_t>>& confusion() const { return confusion_; }
  // The accumulated state as JSON (doubles exactly), so an epoch interrupted
  // mid-way resumes with the same running totals; loading checks the shapes.
  std::string state_json() const;
  void load_state_json(const std::string& text);

 private:
  int64_t num_classes_;
  std::vector<int64_t> top_k_;
  std::vector<int64_t> top_k_correct_;
  std::vector<std::vector<int64_t>> confusion_;
  int64_t count_ = 0;
  double loss_sum_ = 0.0;
};

class RegressionMetrics {
 public:
  // predictions and targets of equal shape [B, ...].
  void update(const Tensor& predictions, const Tensor& targets, double mean_loss = 0.0);
  void reset();
  int64_t count() const { return count_; }
  double loss() const;
  double mse() const;
  double mae() const;
  std::string state_json() const;  // as ClassificationMetrics'
  void load_state_json(const std::string& text);

 private:
  int64_t count_ = 0;     // samples
  int64_t elements_ = 0;  // scalar elements
  double loss_sum_ = 0.0, se_sum_ = 0.0, ae_sum_ = 0.0;
};

}  // namespace ember::train

// Classification and regression metrics accumulated over batches.
//
// Note [metric definitions]: values follow scikit-learn with
// labels=range(num_classes) and zero_division=0: a ratio whose denominator is
// 0 is 0, and a class absent from both targets and predictions still counts
// (as 0) in the macro average. With no samples at all every metric is 0.
// F1 is 2tp / (2tp + fp + fn), scikit-learn's form since 1.3 (equal to
// 2pr / (p + r) whenever that is defined).
#include "ember/train/metrics.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"

namespace ember::train {

namespace {

std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// zero_division=0; see Note [metric definitions].
double ratio(double num, double den) { return den == 0.0 ? 0.0 : num / den; }

// Ranking order of torch.argmax/torch.topk: NaN above every number, and on
// ties the lower index first. True when logit a (at index ia) ranks before b.
bool ranks_before(double a, int64_t ia, double b, int64_t ib) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan || b_nan) return a_nan && (!b_nan || ia < ib);
  return a > b || (a == b && ia < ib);
}

// Elements of t on the host, without recording autograd history.
template <typename T>
std::vector<T> host_values(const Tensor& t) {
  NoGradGuard no_grad;
  return t.to(kCPU).to_vector<T>();
}

double mean_of(const std::vector<double>& per_class) {
  if (per_class.empty()) return 0.0;
  double sum = 0.0;
  for (double v : per_class) sum += v;
  return sum / static_cast<double>(per_class.size());
}

double weighted_mean(const std::vector<double>& per_class, const std::vector<int64_t>& support) {
  double sum = 0.0, total = 0.0;
  for (size_t c = 0; c < per_class.size(); ++c) {
    sum += per_class[c] * static_cast<double>(support[c]);
    total += static_cast<double>(support[c]);
  }
  return ratio(sum, total);
}

}  // namespace

// ---- ClassificationMetrics ----

ClassificationMetrics::ClassificationMetrics(int64_t num_classes, std::vector<int64_t> top_k)
    : num_classes_(num_classes), top_k_(std::move(top_k)) {
  EMBER_CHECK(num_classes_ >= 1, "ClassificationMetrics: num_classes must be at least 1, got {}", num_classes_);
  // k >= num_classes is allowed and always correct, as in scikit-learn's
  // top_k_accuracy_score.
  for (int64_t k : top_k_)
    EMBER_CHECK(k >= 1, "ClassificationMetrics: every top_k must be at least 1, got {}", fmt::join(top_k_, ", "));
  reset();
}

void ClassificationMetrics::reset() {
  top_k_correct_.assign(top_k_.size(), 0);
  confusion_.assign(static_cast<size_t>(num_classes_), std::vector<int64_t>(static_cast<size_t>(num_classes_), 0));
  count_ = 0;
  loss_sum_ = 0.0;
}

void ClassificationMetrics::update(const Tensor& logits, const Tensor& targets, double mean_loss) {
  EMBER_CHECK(logits.defined() && targets.defined(), "ClassificationMetrics::update: logits and targets must be defined");
  EMBER_CHECK(logits.dim() == 2 && logits.size(1) == num_classes_,
              "ClassificationMetrics::update: expected logits [B, {}] (num_classes = {}), got {}", num_classes_,
              num_classes_, shape_str(logits.sizes()));
  EMBER_CHECK(logits.is_floating_point(), "ClassificationMetrics::update: expected floating logits, got dtype {}",
              to_string(logits.scalar_type()));
  EMBER_CHECK(is_integral(targets.scalar_type(), /*include_bool=*/false),
              "ClassificationMetrics::update: expected integer class indices as targets (int64), got dtype {}",
              to_string(targets.scalar_type()));
  const int64_t batch = logits.size(0);
  EMBER_CHECK(targets.dim() == 1 && targets.size(0) == batch,
              "ClassificationMetrics::update: expected targets [{}] to match logits {}, got {}", batch,
              shape_str(logits.sizes()), shape_str(targets.sizes()));

  const std::vector<double> z = host_values<double>(logits);
  const std::vector<int64_t> y = host_values<int64_t>(targets);
  // Validate the whole batch first so a bad batch leaves the state untouched.
  for (int64_t i = 0; i < batch; ++i)
    EMBER_CHECK(y[i] >= 0 && y[i] < num_classes_,
                "ClassificationMetrics::update: target {} at index {} is out of range for num_classes = {} "
                "(expected 0 <= target < {})",
                y[i], i, num_classes_, num_classes_);

  const int64_t c = num_classes_;
  for (int64_t i = 0; i < batch; ++i) {
    const double* row = z.data() + i * c;
    const int64_t t = y[i];
    int64_t pred = 0;
    int64_t rank = 0;  // how many classes rank before the target
    for (int64_t j = 0; j < c; ++j) {
      if (ranks_before(row[j], j, row[pred], pred)) pred = j;
      if (ranks_before(row[j], j, row[t], t)) ++rank;
    }
    ++confusion_[t][pred];
    for (size_t k = 0; k < top_k_.size(); ++k)
      if (rank < top_k_[k]) ++top_k_correct_[k];
  }
  count_ += batch;
  loss_sum_ += mean_loss * static_cast<double>(batch);
}

double ClassificationMetrics::loss() const { return ratio(loss_sum_, static_cast<double>(count_)); }

double ClassificationMetrics::accuracy() const {
  int64_t correct = 0;
  for (int64_t c = 0; c < num_classes_; ++c) correct += confusion_[c][c];
  return ratio(static_cast<double>(correct), static_cast<double>(count_));
}

double ClassificationMetrics::top_k_accuracy(int64_t k) const {
  auto it = std::find(top_k_.begin(), top_k_.end(), k);
  EMBER_CHECK(it != top_k_.end(),
              "ClassificationMetrics::top_k_accuracy: k = {} was not requested; the constructor's top_k is [{}]", k,
              fmt::join(top_k_, ", "));
  return ratio(static_cast<double>(top_k_correct_[it - top_k_.begin()]), static_cast<double>(count_));
}

std::vector<int64_t> ClassificationMetrics::support() const {
  std::vector<int64_t> s(static_cast<size_t>(num_classes_), 0);
  for (int64_t t = 0; t < num_classes_; ++t)
    for (int64_t p = 0; p < num_classes_; ++p) s[t] += confusion_[t][p];
  return s;
}

std::vector<double> ClassificationMetrics::precision_per_class() const {
  std::vector<double> out(static_cast<size_t>(num_classes_));
  for (int64_t p = 0; p < num_classes_; ++p) {
    int64_t predicted = 0;
    for (int64_t t = 0; t < num_classes_; ++t) predicted += confusion_[t][p];
    out[p] = ratio(static_cast<double>(confusion_[p][p]), static_cast<double>(predicted));
  }
  return out;
}

std::vector<double> ClassificationMetrics::recall_per_class() const {
  const std::vector<int64_t> s = support();
  std::vector<double> out(static_cast<size_t>(num_classes_));
  for (int64_t c = 0; c < num_classes_; ++c)
    out[c] = ratio(static_cast<double>(confusion_[c][c]), static_cast<double>(s[c]));
  return out;
}

std::vector<double> ClassificationMetrics::f1_per_class() const {
  const std::vector<int64_t> s = support();
  std::vector<double> out(static_cast<size_t>(num_classes_));
  for (int64_t c = 0; c < num_classes_; ++c) {
    int64_t predicted = 0;
    for (int64_t t = 0; t < num_classes_; ++t) predicted += confusion_[t][c];
    const int64_t tp = confusion_[c][c];
    // 2tp + fp + fn = predicted + support.
    out[c] = ratio(2.0 * static_cast<double>(tp), static_cast<double>(predicted + s[c]));
  }
  return out;
}

double ClassificationMetrics::precision_macro() const { return mean_of(precision_per_class()); }
double ClassificationMetrics::recall_macro() const { return mean_of(recall_per_class()); }
double ClassificationMetrics::f1_macro() const { return mean_of(f1_per_class()); }
double ClassificationMetrics::precision_weighted() const { return weighted_mean(precision_per_class(), support()); }
double ClassificationMetrics::recall_weighted() const { return weighted_mean(recall_per_class(), support()); }
double ClassificationMetrics::f1_weighted() const { return weighted_mean(f1_per_class(), support()); }

// ---- RegressionMetrics ----

void RegressionMetrics::update(const Tensor& predictions, const Tensor& targets, double mean_loss) {
  EMBER_CHECK(predictions.defined() && targets.defined(),
              "RegressionMetrics::update: predictions and targets must be defined");
  EMBER_CHECK(predictions.dim() >= 1,
              "RegressionMetrics::update: expected predictions [B, ...] with a batch dimension, got a scalar {}; "
              "add one with unsqueeze(0)",
              shape_str(predictions.sizes()));
  EMBER_CHECK(predictions.sizes().vec() == targets.sizes().vec(),
              "RegressionMetrics::update: expected predictions and targets of equal shape, got {} and {}",
              shape_str(predictions.sizes()), shape_str(targets.sizes()));
  EMBER_CHECK(targets.scalar_type() != kBool && predictions.scalar_type() != kBool,
              "RegressionMetrics::update: expected numeric tensors, got dtypes {} and {}",
              to_string(predictions.scalar_type()), to_string(targets.scalar_type()));
  const std::vector<double> p = host_values<double>(predictions);
  const std::vector<double> t = host_values<double>(targets);
  double se = 0.0, ae = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double d = p[i] - t[i];
    se += d * d;
    ae += std::fabs(d);
  }
  const int64_t batch = predictions.size(0);
  count_ += batch;
  elements_ += predictions.numel();
  se_sum_ += se;
  ae_sum_ += ae;
  loss_sum_ += mean_loss * static_cast<double>(batch);
}

void RegressionMetrics::reset() {
  count_ = elements_ = 0;
  loss_sum_ = se_sum_ = ae_sum_ = 0.0;
}

double RegressionMetrics::loss() const { return ratio(loss_sum_, static_cast<double>(count_)); }
// The mean over all elements, which is scikit-learn's uniform average over
// outputs since every output has the same number of samples.
double RegressionMetrics::mse() const { return ratio(se_sum_, static_cast<double>(elements_)); }
double RegressionMetrics::mae() const { return ratio(ae_sum_, static_cast<double>(elements_)); }

}  // namespace ember::train

namespace ember::train {

namespace {

nlohmann::json parse_state(const std::string& text, const char* what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EMBER_CHECK(!j.is_discarded() && j.is_object(), "{}: the metric state is not a JSON object", what);
  return j;
}

template <typename T>
T field(const nlohmann::json& j, const char* key, const char* what) {
  EMBER_CHECK(j.contains(key), "{}: the metric state has no '{}'", what, key);
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    EMBER_ERROR("{}: the metric state's '{}' = {} has the wrong type", what, key, j.at(key).dump());
  }
}

}  // namespace

std::string ClassificationMetrics::state_json() const {
  nlohmann::json j;
  j["count"] = count_;
  j["loss_sum"] = loss_sum_;
  j["top_k_correct"] = top_k_correct_;
  j["confusion"] = confusion_;
  return j.dump();
}

void ClassificationMetrics::load_state_json(const std::string& text) {
  const char* what = "ClassificationMetrics";
  const nlohmann::json j = parse_state(text, what);
  auto confusion = field<std::vector<std::vector<int64_t>>>(j, "confusion", what);
  auto top_k_correct = field<std::vector<int64_t>>(j, "top_k_correct", what);
  EMBER_CHECK(confusion.size() == static_cast<size_t>(num_classes_) &&
                  std::all_of(confusion.begin(), confusion.end(),
                              [&](const auto& r) { return r.size() == static_cast<size_t>(num_classes_); }),
              "{}: the state's confusion matrix is not {} x {}", what, num_classes_, num_classes_);
  EMBER_CHECK(top_k_correct.size() == top_k_.size(), "{}: the state has {} top-k counts, expected {}", what,
              top_k_correct.size(), top_k_.size());
  count_ = field<int64_t>(j, "count", what);
  loss_sum_ = field<double>(j, "loss_sum", what);
  confusion_ = std::move(confusion);
  top_k_correct_ = std::move(top_k_correct);
}

std::string RegressionMetrics::state_json() const {
  nlohmann::json j;
  j["count"] = count_;
  j["elements"] = elements_;
  j["loss_sum"] = loss_sum_;
  j["se_sum"] = se_sum_;
  j["ae_sum"] = ae_sum_;
  return j.dump();
}

void RegressionMetrics::load_state_json(const std::string& text) {
  const char* what = "RegressionMetrics";
  const nlohmann::json j = parse_state(text, what);
  count_ = field<int64_t>(j, "count", what);
  elements_ = field<int64_t>(j, "elements", what);
  loss_sum_ = field<double>(j, "loss_sum", what);
  se_sum_ = field<double>(j, "se_sum", what);
  ae_sum_ = field<double>(j, "ae_sum", what);
}

}  // namespace ember::train

// Tabular data from a CSV file: numeric feature columns and a label column
// chosen by name, with standardisation fitted on the training split only.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

// Per-feature (x - mean) / std; std of a constant feature counts as 1.
struct Standardizer {
  Tensor mean, std;  // float32 [F]
  // Population mean and std (ddof 0, like sklearn's StandardScaler) of the
  // rows of x [N, F].
  static Standardizer fit(const Tensor& x);
  Tensor apply(const Tensor& x) const;

  // {"kind": "standardize", "mean": [...], "std": [...]}, float32 values
  // exactly (docs/file-formats.md, source key "input_transform": `ember
  // export` records what a CSV run's rows went through, `ember infer` applies
  // it to CSV rows).
  std::string to_json() const;
  // Throws naming `what` (the file it came from) and the problem.
  static Standardizer from_json(const std::string& text, const std::string& what);
  // Whether an input_transform JSON is of kind "standardize" (else, an image's).
  static bool is_standardize_json(const std::string& text);
};

// Rows of numbers (`ember infer` files, `ember serve` predict bodies) ->
// float32 [rows, cells]. A first row with a cell that is not a number is a
// header; blank lines are skipped; every row has the first row's cells.
// Errors read "{context}:{line}: ..." and name the cell.
Tensor parse_csv_numbers(std::istream& in, const std::string& context);

struct CsvOptions {
  // The label column: by header name, or by index when label_index is set
  // (0 = first, -1 = last, as Python indexes).
  std::string label_column;
  std::optional<int64_t> label_index;
  // Whether the first line is a header; unset: auto, a header when the label
  // is chosen by name, else when a cell of the first line other than the
  // label is not a number. Without a header the columns are named "0", "1", ...
  std::optional<bool> header;
  char delimiter = ',';
  // Labels given as names ("cat") map to indices in sorted order; numeric
  // labels must be integers in [0, num_classes) when num_classes > 0.
  int64_t num_classes = -1;
  // Class names of the training split, so a test file maps names the same way.
  std::vector<std::string> classes;
  bool regression = false;  // numeric targets: labels() is float32 [N, 1]
};

// Samples (features float32 [F], label int64 []). Every row must have as
// many fields as the header and numeric features; errors name file and line.
class CsvDataset : public Dataset {
 public:
  CsvDataset(const std::string& path, CsvOptions options);
  int64_t size() const override { return features_.size(0); }
  Sample get(int64_t index) const override;

  const Tensor& features() const { return features_; }  // float32 [N, F]
  const Tensor& labels() const { return labels_; }      // int64 [N] (float32 [N, 1] for regression)
  const std::vector<std::string>& feature_names() const { return feature_names_; }
  // Names of the classes when labels were names (empty for numeric labels).
  const std::vector<std::string>& classes() const { return classes_; }

  // Samples as images: get() returns each row's features viewed as `shape`
  // ([C, H, W] for pixel columns), whose product must be the feature count.
  void set_sample_shape(std::vector<int64_t> shape);
  const std::vector<int64_t>& sample_shape() const { return sample_shape_; }

  // Fits on the given rows (the training split; all rows when empty).
  Standardizer fit_standardizer(const std::vector<int64_t>& rows = {}) const;
  // Replaces the features by standardized ones (fit on train, apply to all).
  void standardize(const Standardizer& s);

 private:
  Tensor features_, labels_;
  std::vector<std::string> feature_names_, classes_;
  std::vector<int64_t> sample_shape_;  // empty: [F]
};

}  // namespace ember::data

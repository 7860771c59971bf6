// CsvDataset: a strict CSV reader (header, same field count on every row,
// numeric features) and train-only standardisation.
#include "ember/data/datasets/csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ember/ops/factory.h"
#include "file_reader.h"

namespace ember::data {

namespace {

// Splits one line; fields may be quoted ("a,b" and "" for a quote).
std::vector<std::string> split_fields(const std::string& line, char delim, bool& ok) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  ok = true;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      fields.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  ok = !quoted;
  fields.push_back(std::move(cur));
  return fields;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v);
}

// A finite double that becomes inf in float32 (1e39): the caller names it,
// since training would otherwise fail later with a non-finite loss.
bool overflows_float(double d) { return !std::isfinite(static_cast<float>(d)); }

bool parse_int(const std::string& s, int64_t& v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(s.c_str(), &end, 10);
  v = x;
  return end == s.c_str() + s.size() && errno != ERANGE;
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

}  // namespace

CsvDataset::CsvDataset(const std::string& path, CsvOptions options) {
  EMBER_CHECK(!options.label_column.empty() || options.label_index,
              "CsvDataset: set CsvOptions::label_column to the header name of the label column (or label_index) "
              "for '{}'", path);
  std::vector<std::string> lines = detail::read_lines(path);
  size_t first = 0;
  while (first < lines.size() && is_blank(lines[first])) ++first;
  EMBER_CHECK(first < lines.size(), "CsvDataset: '{}' is empty; expected a header line or rows", path);
  bool ok = true;
  std::vector<std::string> header = split_fields(lines[first], options.delimiter, ok);
  for (auto& h : header) h = trim(h);
  EMBER_CHECK(ok, "CsvDataset: '{}' line {}: unterminated quote in the first line", path, first + 1);
  const auto columns = static_cast<int64_t>(header.size());
  size_t label_col = 0;
  if (options.label_index) {
    const int64_t i = *options.label_index;
    EMBER_CHECK(i >= -columns && i < columns,
                "CsvDataset: '{}' line {}: label column index {} is out of range for {} columns (0 is the first, "
                "-1 the last)", path, first + 1, i, columns);
    label_col = static_cast<size_t>(i < 0 ? i + columns : i);
  }
  bool has_header = options.header.value_or(true);
  if (!options.header && options.label_index) {
    // auto: a header has a cell that is not a number (the label may be a name).
    double d = 0;
    has_header = false;
    for (size_t c = 0; c < header.size(); ++c) has_header |= c != label_col && !parse_double(header[c], d);
  }
  EMBER_CHECK(has_header || options.label_index,
              "CsvDataset: '{}': without a header the label column is chosen by index (0 = first, -1 = last), "
              "not by name ('{}')", path, options.label_column);
  if (!has_header)
    for (size_t c = 0; c < header.size(); ++c) header[c] = std::to_string(c);
  const size_t data_start = has_header ? first + 1 : first;
  for (size_t c = 0; c < header.size(); ++c)
    for (size_t d = 0; d < c; ++d)
      EMBER_CHECK(header[c] != header[d],
                  "CsvDataset: '{}' line {}: column name '{}' appears twice in the header (columns {} and {})", path,
                  first + 1, header[c], d + 1, c + 1);
  if (!options.label_index) {
    auto label_it = std::find(header.begin(), header.end(), options.label_column);
    EMBER_CHECK(label_it != header.end(), "CsvDataset: '{}' has no column '{}' in its header; the columns are [{}]",
                path, options.label_column, fmt::join(header, ", "));
    label_col = static_cast<size_t>(label_it - header.begin());
  }
  options.label_column = header[label_col];  // messages name it
  for (size_t c = 0; c < header.size(); ++c)
    if (c != label_col) feature_names_.push_back(header[c]);
  const size_t nf = feature_names_.size();
  EMBER_CHECK(nf > 0, "CsvDataset: '{}' has no feature columns besides the label '{}'", path, options.label_column);

  std::vector<float> feats;
  std::vector<std::string> label_text;
  std::vector<size_t> label_line;
  for (size_t li = data_start; li < lines.size(); ++li) {
    if (is_blank(lines[li])) continue;
    const size_t line_no = li + 1;
    std::vector<std::string> fields = split_fields(lines[li], options.delimiter, ok);
    EMBER_CHECK(ok, "CsvDataset: '{}' line {}: unterminated quote", path, line_no);
    EMBER_CHECK(fields.size() == header.size(),
                "CsvDataset: '{}' line {}: expected {} fields (as in the header), got {}; check "
                "for a missing value or a stray '{}'",
                path, line_no, header.size(), fields.size(), options.delimiter);
    for (size_t c = 0; c < fields.size(); ++c) {
      std::string v = trim(fields[c]);
      if (c == label_col) {
        EMBER_CHECK(!v.empty(), "CsvDataset: '{}' line {}: the label ('{}') is empty", path,
                    line_no, options.label_column);
        label_text.push_back(std::move(v));
        label_line.push_back(line_no);
        continue;
      }
      double d = 0;
      EMBER_CHECK(parse_double(v, d),
                  "CsvDataset: '{}' line {}: column '{}' has non-numeric value '{}'; features must "
                  "be finite numbers (encode categories or drop the column first)",
                  path, line_no, header[c], v);
      EMBER_CHECK(!overflows_float(d),
                  "CsvDataset: '{}' line {}: column '{}' has value '{}', which overflows float32 (largest "
                  "magnitude 3.4e38); rescale the column",
                  path, line_no, header[c], v);
      feats.push_back(static_cast<float>(d));
    }
  }
  const size_t n = label_text.size();
  EMBER_CHECK(n > 0, "CsvDataset: '{}' has a header but no data rows", path);

  if (options.regression) {
    // Targets are numbers: float32 [N, 1].
    std::vector<float> targets(n);
    for (size_t i = 0; i < n; ++i) {
      double d = 0;
      EMBER_CHECK(parse_double(label_text[i], d), "CsvDataset: '{}' line {}: target '{}' ('{}') is not a number",
                  path, label_line[i], label_text[i], options.label_column);
      EMBER_CHECK(!overflows_float(d),
                  "CsvDataset: '{}' line {}: target '{}' ('{}') overflows float32 (largest magnitude 3.4e38); "
                  "rescale the targets", path, label_line[i], label_text[i], options.label_column);
      targets[i] = static_cast<float>(d);
    }
    features_ = tensor<float>(feats, {static_cast<int64_t>(n), static_cast<int64_t>(nf)});
    labels_ = tensor<float>(targets, {static_cast<int64_t>(n), 1});
    return;
  }

  // Labels: names (classes given, or any non-integer label) or integers.
  std::vector<int64_t> labels(n);
  bool numeric = options.classes.empty();
  size_t non_int = n;
  for (size_t i = 0; numeric && i < n; ++i)
    if (!(numeric = parse_int(label_text[i], labels[i]))) non_int = i;
  // Integer class ids were asked for (a test split of numerically labelled
  // training data): a name here would silently get a class of its own.
  EMBER_CHECK(numeric || !options.classes.empty() || options.num_classes <= 0,
              "CsvDataset: '{}' line {}: label '{}' ('{}') is not an integer class id in [0, {}) like the training "
              "labels", path, non_int < n ? label_line[non_int] : 0, non_int < n ? label_text[non_int] : "",
              options.label_column, options.num_classes);
  if (numeric) {
    for (size_t i = 0; i < n; ++i)
      EMBER_CHECK(labels[i] >= 0 && (options.num_classes <= 0 || labels[i] < options.num_classes),
                  "CsvDataset: '{}' line {}: label {} is out of range [0, {}) ", path,
                  label_line[i], labels[i],
                  options.num_classes > 0 ? fmt::format("{}", options.num_classes) : "inf");
  } else {
    classes_ = options.classes;
    if (classes_.empty()) {
      std::set<std::string> names(label_text.begin(), label_text.end());
      classes_.assign(names.begin(), names.end());
    }
    for (size_t i = 0; i < n; ++i) {
      auto it = std::find(classes_.begin(), classes_.end(), label_text[i]);
      EMBER_CHECK(it != classes_.end(),
                  "CsvDataset: '{}' line {}: label '{}' is not one of the {} training classes "
                  "[{}]", path, label_line[i], label_text[i], classes_.size(),
                  fmt::join(classes_, ", "));
      labels[i] = it - classes_.begin();
    }
    EMBER_CHECK(options.num_classes <= 0 ||
                    static_cast<int64_t>(classes_.size()) <= options.num_classes,
                "CsvDataset: '{}' has {} classes, more than num_classes = {}", path,
                classes_.size(), options.num_classes);
  }
  features_ = tensor<float>(feats, {static_cast<int64_t>(n), static_cast<int64_t>(nf)});
  labels_ = tensor<int64_t>(labels, {static_cast<int64_t>(n)});
}

Sample CsvDataset::get(int64_t index) const {
  EMBER_CHECK_INDEX(index >= 0 && index < size(),
                    "CsvDataset: index {} is out of range for a dataset of size {}", index, size());
  Tensor x = features_.select(0, index);
  return Sample(sample_shape_.empty() ? x : x.reshape(sample_shape_), labels_.select(0, index));
}

void CsvDataset::set_sample_shape(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  EMBER_CHECK(!shape.empty() && n == features_.size(1),
              "CsvDataset: a sample shape [{}] holds {} values, but the rows have {} feature columns",
              fmt::join(shape, ", "), n, features_.size(1));
  sample_shape_ = std::move(shape);
}

Tensor parse_csv_numbers(std::istream& in, const std::string& context) {
  std::vector<float> values;
  int64_t cols = -1, rows = 0, line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<float> row;
    std::string bad;  // the first cell that is not a number
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) {
      size_t used = 0;
      try {
        row.push_back(std::stof(cell, &used));
      } catch (const std::exception&) {
        used = 0;  // not a number, or out of float's range
      }
      if (bad.empty() && (used == 0 || cell.find_first_not_of(" \t", used) != std::string::npos))
        bad = fmt::format("cell {} ('{}')", row.size() + (used == 0 ? 1 : 0), cell.substr(0, 40));
    }
    if (!bad.empty()) {
      EMBER_CHECK(rows == 0 && cols < 0, "{}:{}: {} is not a number", context, line_no, bad);
      cols = 0;  // header seen
      continue;
    }
    if (cols <= 0) cols = static_cast<int64_t>(row.size());
    EMBER_CHECK(static_cast<int64_t>(row.size()) == cols, "{}:{}: {} cells, the first row has {}", context, line_no,
                row.size(), cols);
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
  }
  EMBER_CHECK(rows > 0, "{}: no rows of numbers", context);
  return tensor<float>(values, {rows, cols});
}

Standardizer Standardizer::fit(const Tensor& x_in) {
  EMBER_CHECK(x_in.dim() == 2 && x_in.size(0) > 0,
              "Standardizer::fit: expected features [N, F] with N > 0, got Tensor[{}]",
              fmt::join(x_in.sizes(), ", "));
  Tensor x = x_in.to(kFloat64).contiguous();
  const int64_t n = x.size(0), f = x.size(1);
  const double* p = x.data_ptr<double>();
  std::vector<float> mean(static_cast<size_t>(f)), sd(static_cast<size_t>(f));
  for (int64_t j = 0; j < f; ++j) {
    double m = 0, ss = 0;
    for (int64_t i = 0; i < n; ++i) m += p[i * f + j];
    m /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) ss += (p[i * f + j] - m) * (p[i * f + j] - m);
    double s = std::sqrt(ss / static_cast<double>(n));
    mean[static_cast<size_t>(j)] = static_cast<float>(m);
    sd[static_cast<size_t>(j)] = s > 0 ? static_cast<float>(s) : 1.0f;  // constant column
  }
  return {tensor<float>(mean), tensor<float>(sd)};
}

Tensor Standardizer::apply(const Tensor& x) const {
  EMBER_CHECK(mean.defined() && x.dim() == 2 && x.size(1) == mean.size(0),
              "Standardizer::apply: expected features [N, {}], got Tensor[{}]",
              mean.defined() ? mean.size(0) : 0, fmt::join(x.sizes(), ", "));
  return ((x.to(kFloat32) - mean) / std).contiguous();
}

std::string Standardizer::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = "standardize";
  j["mean"] = mean.to(kFloat32).contiguous().to_vector<float>();
  j["std"] = std.to(kFloat32).contiguous().to_vector<float>();
  return j.dump();
}

bool Standardizer::is_standardize_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("kind") && j["kind"] == "standardize";
}

Standardizer Standardizer::from_json(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& problem) -> Standardizer { EMBER_ERROR("{}: input_transform: {}", what, problem); };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kind") || j["kind"] != "standardize")
    return bad(fmt::format("expected {{\"kind\": \"standardize\", ...}}, got '{}'", text));
  auto numbers = [&](const char* key) {
    std::vector<float> v;
    if (!j.contains(key) || !j[key].is_array() || j[key].empty())
      bad(fmt::format("'{}' must be a non-empty list of numbers", key));
    for (const auto& x : j[key]) {
      if (!x.is_number()) bad(fmt::format("'{}' holds {}, not a number", key, x.dump()));
      const double d = x.get<double>();
      if (!std::isfinite(d) || std::abs(d) > std::numeric_limits<float>::max())
        bad(fmt::format("'{}' holds {}, not a finite float32", key, x.dump()));
      v.push_back(static_cast<float>(d));
    }
    return v;
  };
  const std::vector<float> m = numbers("mean"), s = numbers("std");
  if (m.size() != s.size()) bad(fmt::format("{} means but {} stds", m.size(), s.size()));
  for (float x : s)
    if (!(x > 0)) bad(fmt::format("std {} is not positive", x));
  const int64_t f = static_cast<int64_t>(m.size());
  return Standardizer{tensor<float>(m, {f}), tensor<float>(s, {f})};
}

Standardizer CsvDataset::fit_standardizer(const std::vector<int64_t>& rows) const {
  if (rows.empty()) return Standardizer::fit(features_);
  for (int64_t r : rows)
    EMBER_CHECK_INDEX(r >= 0 && r < size(), "CsvDataset::fit_standardizer: row {} is out of range "
                      "for {} rows", r, size());
  return Standardizer::fit(features_.index_select(0, tensor<int64_t>(rows)));
}

void CsvDataset::standardize(const Standardizer& s) { features_ = s.apply(features_); }

}  // namespace ember::data

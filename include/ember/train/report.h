// The files of a run directory that describe it: metrics.csv, curves.svg
// and report.html. Pure functions of their inputs, so a resumed run writes
// byte-identical files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ember::train {

// One row per epoch; columns in insertion order of the first row.
class MetricsTable {
 public:
  using Row = std::vector<std::pair<std::string, double>>;

  void add_row(const Row& row);  // later rows must have the same columns
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<double>>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }
  std::vector<double> column(const std::string& name) const;  // empty if absent
  bool has_column(const std::string& name) const;

  // CSV with a header; numbers printed with %.17g (integers without a
  // fraction) so the text is an exact function of the values.
  std::string to_csv() const;
  // Reads what to_csv wrote (throws ember::Error naming the file and line).
  static MetricsTable from_csv(const std::string& text, const std::string& source_name);

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<double>> rows_;
};

// A self-contained SVG with three panels: loss (train_loss, val_loss),
// accuracy (train_acc, val_acc) and learning rate (lr), against epoch.
// Columns that are absent are skipped.
std::string curves_svg(const MetricsTable& table);
// The same for steps.csv, against step: loss (train_loss), accuracy and
// macro F1 (train_acc, train_f1) and throughput (images_per_s).
std::string steps_svg(const MetricsTable& steps);

struct ReportInput {
  std::string title;                   // run name
  // The header under the title: start, duration, command line, data sizes,
  // versions (name, value), in order.
  std::vector<std::pair<std::string, std::string>> header;
  MetricsTable metrics;
  MetricsTable steps;                  // steps.csv; may be empty
  // Test metrics; per-class ones (test_f1[CLASS], test_precision[..],
  // test_recall[..]) go to the per-class table.
  std::vector<std::pair<std::string, double>> final_metrics;
  std::vector<std::vector<int64_t>> confusion;                // may be empty
  std::vector<std::string> class_names;
  std::string config_yaml;
  // (from which epoch, the command and what it changed), oldest first.
  std::vector<std::pair<std::string, std::string>> history;
  // Keys a resume changed, with the value in force per epoch range
  // ("optim.lr", "0.05 (epochs 1-2); 0.01 (from epoch 3)"); shown beside the
  // configuration, which holds the values in force now.
  std::vector<std::pair<std::string, std::string>> settings_by_epoch;
  std::vector<std::pair<std::string, std::string>> environment;  // versions, CPU, threads, seed
};
// A single HTML5 file (inline SVG curves, tables; no external resources),
// with every text HTML-escaped.
std::string report_html(const ReportInput& input);

}  // namespace ember::train

// metrics.csv, curves.svg and report.html of a run directory. Every output
// is a pure function of its input (no clocks, no locale, no hash-ordered
// containers), so a resumed run rewrites the same bytes.
#include "ember/train/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "ember/core/error.h"

namespace ember::train {

namespace {

// ---- text helpers ----

// Exact: %.17g round-trips every double; an integral value prints with no
// fraction ("3", not "3.0"), and NaN/inf as "nan"/"inf"/"-inf".
std::string exact_number(double v) { return fmt::format("{:.17g}", v); }

// For tables a reader scans: six significant digits, integers in full.
std::string display_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

// Escapes for both HTML text/attributes and XML (the inline SVG).
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

// Column names are written unquoted, so they must not need CSV quoting.
void check_column_name(const std::string& name, std::string_view where) {
  EMBER_CHECK(!name.empty(), "{}: a column name is empty", where);
  EMBER_CHECK(name.find_first_of(",\"\r\n") == std::string::npos,
              "{}: column name '{}' contains a comma, quote or line break; metrics.csv writes names unquoted", where,
              name);
}

}  // namespace

// ---- MetricsTable ----

void MetricsTable::add_row(const Row& row) {
  if (columns_.empty()) {
    EMBER_CHECK(!row.empty(), "MetricsTable::add_row: the first row defines the columns and must not be empty");
    for (const auto& [name, value] : row) {
      check_column_name(name, "MetricsTable::add_row");
      EMBER_CHECK(std::find(columns_.begin(), columns_.end(), name) == columns_.end(),
                  "MetricsTable::add_row: column '{}' appears twice in the row", name);
      columns_.push_back(name);
    }
  }
  // Later rows may list the columns in any order, but exactly these columns.
  std::vector<double> values(columns_.size());
  std::vector<bool> seen(columns_.size(), false);
  for (const auto& [name, value] : row) {
    auto it = std::find(columns_.begin(), columns_.end(), name);
    EMBER_CHECK(it != columns_.end(), "MetricsTable::add_row: row {} has column '{}' not in the table's columns [{}]",
                rows_.size(), name, fmt::join(columns_, ", "));
    const size_t i = static_cast<size_t>(it - columns_.begin());
    EMBER_CHECK(!seen[i], "MetricsTable::add_row: column '{}' appears twice in row {}", name, rows_.size());
    seen[i] = true;
    values[i] = value;
  }
  for (size_t i = 0; i < columns_.size(); ++i)
    EMBER_CHECK(seen[i], "MetricsTable::add_row: row {} lacks column '{}'; every row needs the columns [{}]",
                rows_.size(), columns_[i], fmt::join(columns_, ", "));
  rows_.push_back(std::move(values));
}

std::vector<double> MetricsTable::column(const std::string& name) const {
  auto it = std::find(columns_.begin(), columns_.end(), name);
  if (it == columns_.end()) return {};
  const size_t i = static_cast<size_t>(it - columns_.begin());
  std::vector<double> out;
  out.reserve(rows_.size());
  for (const auto& r : rows_) out.push_back(r[i]);
  return out;
}

bool MetricsTable::has_column(const std::string& name) const {
  return std::find(columns_.begin(), columns_.end(), name) != columns_.end();
}

std::string MetricsTable::to_csv() const {
  if (columns_.empty()) return "";
  std::string out = fmt::format("{}\n", fmt::join(columns_, ","));
  for (const auto& r : rows_) {
    for (size_t i = 0; i < r.size(); ++i) {
      if (i) out += ',';
      out += exact_number(r[i]);
    }
    out += '\n';
  }
  return out;
}

MetricsTable MetricsTable::from_csv(const std::string& text, const std::string& source_name) {
  MetricsTable table;
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the final newline
  if (lines.empty()) return table;                               // what to_csv writes for an empty table
  for (auto& line : lines)
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF from an editor

  for (std::string_view field : split(lines[0], ',')) {
    std::string name(trim(field));
    const std::string where = fmt::format("{}:1", source_name);
    check_column_name(name, where);
    EMBER_CHECK(std::find(table.columns_.begin(), table.columns_.end(), name) == table.columns_.end(),
                "{}: column '{}' appears twice in the header", where, name);
    table.columns_.push_back(std::move(name));
  }
  for (size_t n = 1; n < lines.size(); ++n) {
    const size_t line_no = n + 1;
    std::vector<std::string_view> fields = split(lines[n], ',');
    EMBER_CHECK(fields.size() == table.columns_.size(), "{}:{}: expected {} fields ({}), got {}: '{}'", source_name,
                line_no, table.columns_.size(), fmt::join(table.columns_, ","), fields.size(), lines[n]);
    std::vector<double> values;
    values.reserve(fields.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string_view f = trim(fields[i]);
      double v = 0.0;
      // from_chars is locale-independent and reads what %.17g writes,
      // including nan and inf; it does not take a leading '+'.
      if (!f.empty() && f.front() == '+') f.remove_prefix(1);
      auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      EMBER_CHECK(!f.empty() && ec == std::errc() && end == f.data() + f.size(),
                  "{}:{}: column '{}' has '{}', which is not a number a double can hold", source_name, line_no, table.columns_[i],
                  fields[i]);
      values.push_back(v);
    }
    table.rows_.push_back(std::move(values));
  }
  return table;
}

// ---- curves_svg ----

namespace {

constexpr double kPanelWidth = 360, kPanelHeight = 300;
constexpr double kLeft = 60, kRight = 14, kTop = 30, kBottom = 64;
constexpr double kPlotWidth = kPanelWidth - kLeft - kRight, kPlotHeight = kPanelHeight - kTop - kBottom;

// A linear axis with round tick values (steps of 1, 2 or 5 times a power of 10).
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  int decimals = 0;  // digits after the point that tell the ticks apart

  double fraction(double v) const { return (v - lo) / (hi - lo); }
  std::string label(double v) const {
    if (std::fabs(v) >= 1e7 || decimals > 6) return fmt::format("{:.3g}", v);
    return fmt::format("{:.{}f}", v, decimals);
  }
};

Axis nice_axis(double lo, double hi, bool integral) {
  if (lo == hi) {  // one value (or one row): widen so it sits mid-panel
    const double pad = integral ? 1.0 : (lo == 0 ? 1.0 : std::fabs(lo) * 0.1);
    lo -= pad;
    hi += pad;
  }
  Axis a;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / mag;
  double step = mag * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
  if (integral) step = std::max(step, 1.0);
  const double first = std::floor(lo / step), last = std::ceil(hi / step);
  if (!std::isfinite(step) || step <= 0 || !std::isfinite(first * step) || !std::isfinite(last * step) ||
      last - first > 100) {
    // Values too extreme for round steps: label the ends only.
    a.lo = lo;
    a.hi = hi;
    a.ticks = {lo, hi};
    a.decimals = 7;
    return a;
  }
  a.lo = first * step;
  a.hi = last * step;
  const int count = static_cast<int>(last - first);
  for (int k = 0; k <= count; ++k) {
    const double i = first + k;
    a.ticks.push_back(i == 0 ? 0.0 : i * step);  // never "-0"
  }
  a.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  return a;
}

struct Series {
  std::string name;
  std::string color;
};

struct Panel {
  std::string title;
  std::vector<Series> series;
};

// Panels side by side; x is the `x` column, or the row number from 1.
std::string panels_svg(const MetricsTable& table, const std::vector<Panel>& panels, const std::string& x);

std::string num(double v) { return fmt::format("{:.2f}", v); }

// One panel at horizontal offset x0: frame, grid, tick labels, lines, legend.
void draw_panel(std::string& out, const MetricsTable& table, const Panel& panel, const std::string& x, double x0) {
  const double px = x0 + kLeft, py = kTop;
  out += fmt::format("<g>\n<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
                     num(x0 + kLeft + kPlotWidth / 2), escape(panel.title));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", num(px),
                     num(py), num(kPlotWidth), num(kPlotHeight));

  // x: the x column when there is one, else the row number from 1.
  std::vector<double> xs = table.column(x);
  if (xs.empty())
    for (size_t i = 0; i < table.size(); ++i) xs.push_back(static_cast<double>(i + 1));

  std::vector<const Series*> present;
  double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
  bool x_integral = true;
  for (const Series& s : panel.series) {
    if (!table.has_column(s.name)) continue;
    present.push_back(&s);
    const std::vector<double> ys = table.column(s.name);
    for (size_t i = 0; i < ys.size(); ++i) {
      if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) continue;  // NaN/inf points are skipped
      ylo = std::min(ylo, ys[i]);
      yhi = std::max(yhi, ys[i]);
      xlo = std::min(xlo, xs[i]);
      xhi = std::max(xhi, xs[i]);
      x_integral = x_integral && xs[i] == std::floor(xs[i]);
    }
  }
  if (ylo > yhi) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#777\">no data</text>\n</g>\n",
                       num(px + kPlotWidth / 2), num(py + kPlotHeight / 2));
    return;
  }
  const Axis xa = nice_axis(xlo, xhi, x_integral);
  const Axis ya = nice_axis(ylo, yhi, false);
  auto sx = [&](double x) { return px + xa.fraction(x) * kPlotWidth; };
  auto sy = [&](double y) { return py + kPlotHeight - ya.fraction(y) * kPlotHeight; };

  for (double t : ya.ticks) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e5e5e5\"/>\n", num(px), num(sy(t)),
                       num(px + kPlotWidth), num(sy(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", num(px - 5), num(sy(t) + 4),
                       escape(ya.label(t)));
  }
  for (double t : xa.ticks) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\n", num(sx(t)),
                       num(py + kPlotHeight), num(sx(t)), num(py + kPlotHeight + 4));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(sx(t)),
                       num(py + kPlotHeight + 16), escape(xa.label(t)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(px + kPlotWidth / 2),
                     num(py + kPlotHeight + 32), escape(x));

  for (const Series* s : present) {
    const std::vector<double> ys = table.column(s->name);
    // A NaN breaks the line: each finite run is its own polyline, and a run
    // of one point is drawn as a dot so a single epoch is still visible.
    std::vector<std::pair<double, double>> run;
    auto flush = [&] {
      if (run.size() == 1) {
        out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n", num(run[0].first),
                           num(run[0].second), s->color);
      } else if (run.size() > 1) {
        std::string pts;
        for (const auto& [x, y] : run) pts += fmt::format("{}{},{}", pts.empty() ? "" : " ", num(x), num(y));
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>\n", s->color,
                           pts);
      }
      run.clear();
    };
    for (size_t i = 0; i < ys.size(); ++i) {
      if (std::isfinite(xs[i]) && std::isfinite(ys[i])) {
        run.emplace_back(sx(xs[i]), sy(ys[i]));
      } else {
        flush();
      }
    }
    flush();
  }

  double lx = px;
  const double ly = py + kPlotHeight + 50;
  for (const Series* s : present) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>\n", num(lx),
                       num(ly - 4), num(lx + 18), num(ly - 4), s->color);
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(lx + 22), num(ly), escape(s->name));
    lx += 26 + 7.0 * static_cast<double>(s->name.size());
  }
  out += "</g>\n";
}

std::string panels_svg(const MetricsTable& table, const std::vector<Panel>& panels, const std::string& x) {
  const double width = kPanelWidth * static_cast<double>(panels.size());
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      num(width), num(kPanelHeight));
  for (size_t i = 0; i < panels.size(); ++i)
    draw_panel(out, table, panels[i], x, kPanelWidth * static_cast<double>(i));
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string curves_svg(const MetricsTable& table) {
  return panels_svg(table,
                    {
                        {"Loss", {{"train_loss", "#1f77b4"}, {"val_loss", "#ff7f0e"}}},
                        {"Accuracy / F1", {{"train_acc", "#1f77b4"}, {"val_acc", "#ff7f0e"}, {"val_f1", "#9467bd"}}},
                        {"Learning rate", {{"lr", "#2ca02c"}}},
                    },
                    "epoch");
}

std::string steps_svg(const MetricsTable& steps) {
  return panels_svg(steps,
                    {
                        {"Loss per step", {{"train_loss", "#1f77b4"}}},
                        {"Accuracy / F1 per step", {{"train_acc", "#1f77b4"}, {"train_f1", "#9467bd"}}},
                        {"Throughput (images/s)", {{"images_per_s", "#2ca02c"}}},
                    },
                    "step");
}

// ---- report_html ----

namespace {

// Note [report width]: the page fits 1280 px: the body is capped, tables use
// a small font, their headers wrap anywhere (long metric names), and a
// table still wider scrolls inside its own box instead of widening the page.
constexpr std::string_view kStyle = R"(body { font-family: sans-serif; margin: 1em auto; padding: 0 1em; color: #222; max-width: 1280px; box-sizing: border-box; }
.wide { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.45em; text-align: right; }
th { overflow-wrap: anywhere; max-width: 9em; }
table.header td { text-align: left; max-width: 60em; overflow-wrap: anywhere; }
th { background: #f3f3f3; }
td.name, th.name { text-align: left; }
td.dark { color: #fff; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; }
svg { max-width: 100%; height: auto; }
)";

void append_name_value_table(std::string& out, const std::vector<std::pair<std::string, std::string>>& rows,
                             std::string_view value_header) {
  out += fmt::format("<table>\n<tr><th class=\"name\">name</th><th class=\"name\">{}</th></tr>\n", value_header);
  for (const auto& [name, value] : rows)
    out += fmt::format("<tr><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>\n", escape(name), escape(value));
  out += "</table>\n";
}

void append_epoch_table(std::string& out, const MetricsTable& m) {
  out += "<div class=\"wide\"><table>\n<tr>";
  for (const auto& c : m.columns()) out += fmt::format("<th>{}</th>", escape(c));
  out += "</tr>\n";
  for (const auto& r : m.rows()) {
    out += "<tr>";
    for (double v : r) out += fmt::format("<td>{}</td>", escape(display_number(v)));
    out += "</tr>\n";
  }
  out += "</table></div>\n";
}

// "test_f1[Coat]" -> {"f1", "Coat"}; nullopt for a metric of the whole set.
std::optional<std::pair<std::string, std::string>> per_class_name(const std::string& name) {
  const size_t open = name.find('[');
  if (name.rfind("test_", 0) != 0 || open == std::string::npos || name.back() != ']') return std::nullopt;
  return std::make_pair(name.substr(5, open - 5), name.substr(open + 1, name.size() - open - 2));
}

// One row per class: precision, recall, F1 (and support from the confusion
// matrix's row sums when there is one), in the order the classes come.
void append_per_class(std::string& out, const ReportInput& in) {
  std::vector<std::string> classes;
  std::map<std::pair<std::string, std::string>, double> value;  // (class, metric)
  for (const auto& [name, v] : in.final_metrics) {
    const auto pc = per_class_name(name);
    if (!pc) continue;
    if (std::find(classes.begin(), classes.end(), pc->second) == classes.end()) classes.push_back(pc->second);
    value[{pc->second, pc->first}] = v;
  }
  if (classes.empty()) return;
  const bool support = in.confusion.size() == classes.size();
  out += "<h2>Per class (test)</h2>\n<table>\n<tr><th class=\"name\">class</th><th>precision</th><th>recall</th>"
         "<th>F1</th>";
  out += support ? "<th>support</th></tr>\n" : "</tr>\n";
  for (size_t i = 0; i < classes.size(); ++i) {
    out += fmt::format("<tr><td class=\"name\">{}</td>", escape(classes[i]));
    for (const char* m : {"precision", "recall", "f1"}) {
      auto it = value.find({classes[i], m});
      out += fmt::format("<td>{}</td>", it == value.end() ? "-" : fmt::format("{:.4f}", it->second));
    }
    if (support) {
      int64_t total = 0;
      for (int64_t v : in.confusion[i]) total += v;
      out += fmt::format("<td>{}</td>", total);
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
}

// Rows are true classes, columns predicted ones; a cell's shade is its share
// of the row (the class's recall on the diagonal).
void append_confusion(std::string& out, const std::vector<std::vector<int64_t>>& confusion,
                      const std::vector<std::string>& class_names) {
  const size_t n = confusion.size();
  for (size_t i = 0; i < n; ++i)
    EMBER_CHECK(confusion[i].size() == n, "report_html: confusion matrix must be square ({0} x {0}), row {1} has {2} entries",
                n, i, confusion[i].size());
  EMBER_CHECK(class_names.empty() || class_names.size() == n,
              "report_html: {} class names for a {} x {} confusion matrix; pass one name per class or none",
              class_names.size(), n, n);
  auto name = [&](size_t i) { return class_names.empty() ? std::to_string(i) : class_names[i]; };

  out += "<table>\n<tr><th class=\"name\">true \\ predicted</th>";
  for (size_t j = 0; j < n; ++j) out += fmt::format("<th>{}</th>", escape(name(j)));
  out += "<th>total</th></tr>\n";
  for (size_t i = 0; i < n; ++i) {
    int64_t total = 0;
    for (int64_t v : confusion[i]) total += v;
    out += fmt::format("<tr><th class=\"name\">{}</th>", escape(name(i)));
    for (size_t j = 0; j < n; ++j) {
      const double share = total > 0 ? static_cast<double>(confusion[i][j]) / static_cast<double>(total) : 0.0;
      out += fmt::format("<td{} style=\"background-color: rgba(31, 119, 180, {:.3f})\">{}</td>",
                         share > 0.6 ? " class=\"dark\"" : "", share, confusion[i][j]);
    }
    out += fmt::format("<td>{}</td></tr>\n", total);
  }
  out += "</table>\n";
}

}  // namespace

std::string report_html(const ReportInput& input) {
  const std::string title = escape(input.title.empty() ? std::string("Ember run") : input.title);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>\n{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
      title, kStyle);
  if (!input.header.empty()) {
    out += "<table class=\"header\">\n";
    for (const auto& [name, value] : input.header)
      out += fmt::format("<tr><th class=\"name\">{}</th><td>{}</td></tr>\n", escape(name), escape(value));
    out += "</table>\n";
  }

  out += "<h2>Curves</h2>\n";
  out += curves_svg(input.metrics);
  if (input.steps.size() > 0) {
    out += "<h2>Per-step curves</h2>\n";
    out += steps_svg(input.steps);
  }

  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& [name, value] : input.final_metrics)
    if (!per_class_name(name)) rows.emplace_back(name, display_number(value));
  if (!rows.empty()) {
    out += "<h2>Final metrics</h2>\n";
    append_name_value_table(out, rows, "value");
  }
  append_per_class(out, input);
  if (!input.confusion.empty()) {
    out += "<h2>Confusion matrix</h2>\n";
    append_confusion(out, input.confusion, input.class_names);
  }
  if (input.metrics.size() > 0) {
    out += "<h2>Per-epoch metrics</h2>\n";
    append_epoch_table(out, input.metrics);
  }
  // HTML drops a newline right after <pre>; this one keeps the config's own
  // first line (even an empty one) intact.
  if (!input.history.empty()) {
    // The configuration below is what runs now; this says since when.
    out += "<h2>Commands</h2>\n";
    append_name_value_table(out, input.history, "command and changes");
  }
  out += "<h2>Configuration</h2>\n";
  if (!input.settings_by_epoch.empty()) {
    out += "<p>In force now; these keys changed during the run:</p>\n";
    append_name_value_table(out, input.settings_by_epoch, "value by epoch");
  }
  out += fmt::format("<pre>\n{}</pre>\n", escape(input.config_yaml));
  if (!input.environment.empty()) {
    out += "<h2>Environment</h2>\n";
    append_name_value_table(out, input.environment, "value");
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ember::train

// metrics.csv round trips, curves.svg well-formedness, report.html escaping,
// and that every output is a deterministic function of its input.
#include "ember/train/report.h"

#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
using ember::train::MetricsTable;
using ember::train::ReportInput;

namespace {

size_t count_of(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

// A minimal XML well-formedness check: nested, matching tags; quoted
// attributes; '&' only in a known entity; no stray '<' or '>' in text.
// Returns "" when well-formed, else what is wrong.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  size_t i = 0, roots = 0;
  auto entity_ok = [&](size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"})
      if (s.compare(at, std::strlen(e), e) == 0) return true;
    return false;
  };
  while (i < s.size()) {
    if (s[i] == '&' && !entity_ok(i)) return "bad entity at " + std::to_string(i);
    if (s[i] == '>') return "stray '>' at " + std::to_string(i);
    if (s[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(s[i]))) return "text outside the root";
      ++i;
      continue;
    }
    const bool closing = s[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    size_t name_end = j;
    while (name_end < s.size() && (std::isalnum(static_cast<unsigned char>(s[name_end])) || s[name_end] == '-'))
      ++name_end;
    const std::string name = s.substr(j, name_end - j);
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    j = name_end;
    bool self_closing = false;
    while (true) {  // attributes
      while (j < s.size() && s[j] == ' ') ++j;
      if (j >= s.size()) return "unterminated tag " + name;
      if (s[j] == '>') break;
      if (s.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      if (closing) return "attributes on closing tag " + name;
      size_t eq = s.find('=', j);
      if (eq == std::string::npos || s[eq + 1] != '"') return "unquoted attribute in " + name;
      size_t end = s.find('"', eq + 2);
      if (end == std::string::npos) return "unterminated attribute in " + name;
      for (size_t k = eq + 2; k < end; ++k) {
        if (s[k] == '<') return "'<' in an attribute of " + name;
        if (s[k] == '&' && !entity_ok(k)) return "bad entity in an attribute of " + name;
      }
      j = end + 1;
    }
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else if (!self_closing) {
      if (open.empty()) ++roots;
      open.push_back(name);
    } else if (open.empty()) {
      ++roots;
    }
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (roots != 1) return "expected one root element, got " + std::to_string(roots);
  return "";
}

MetricsTable sample_table(int epochs) {
  MetricsTable t;
  for (int e = 1; e <= epochs; ++e)
    t.add_row({{"epoch", e},
               {"train_loss", 2.0 / e},
               {"val_loss", 2.2 / e},
               {"train_acc", 1.0 - 0.5 / e},
               {"val_acc", 1.0 - 0.6 / e},
               {"lr", 0.1 * std::pow(0.5, e - 1)}});
  return t;
}

ReportInput sample_report() {
  ReportInput in;
  in.title = "mnist <mlp> & friends";
  in.metrics = sample_table(5);
  in.final_metrics = {{"test_acc", 0.98125}, {"test_loss", 0.0625}};
  in.confusion = {{8, 2}, {1, 9}};
  in.class_names = {"cat", "<dog>"};
  in.config_yaml = "model: mlp\nnote: \"</pre><script>alert('x')</script>\"\n";
  in.environment = {{"ember", "0.1.0"}, {"threads", "2"}, {"seed", "42"}};
  return in;
}

}  // namespace

// ---- MetricsTable / CSV ----

TEST(TrainReport, CsvIsExactAndRoundTrips) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {0.1, 1e-300, 123456789, NAN, -0.0, 1.0 / 3, 5e-324, 1.7976931348623157e308,
                                      -inf, 2.5e-4};
  MetricsTable t;
  MetricsTable::Row row;
  for (size_t i = 0; i < values.size(); ++i) row.emplace_back("c" + std::to_string(i), values[i]);
  t.add_row(row);
  t.add_row({{"c0", 1}, {"c1", 2}, {"c2", 3}, {"c3", 4}, {"c4", 5}, {"c5", 6}, {"c6", 7}, {"c7", 8}, {"c8", 9},
             {"c9", inf}});
  const std::string csv = t.to_csv();
  // %.17g, as printf writes it (checked with Python's '%.17g' % v).
  EXPECT_EQ(csv,
            "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9\n"
            "0.10000000000000001,1e-300,123456789,nan,-0,0.33333333333333331,4.9406564584124654e-324,"
            "1.7976931348623157e+308,-inf,0.00025000000000000001\n"
            "1,2,3,4,5,6,7,8,9,inf\n");

  MetricsTable back = MetricsTable::from_csv(csv, "metrics.csv");
  ASSERT_EQ(back.columns(), t.columns());
  ASSERT_EQ(back.size(), 2u);
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < values.size(); ++c) {
      const double a = t.rows()[r][c], b = back.rows()[r][c];
      if (std::isnan(a)) {
        EXPECT_TRUE(std::isnan(b)) << "row " << r << " col " << c;
      } else {
        EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)) << "row " << r << " col " << c;
      }
    }
  EXPECT_EQ(back.to_csv(), csv);
}

TEST(TrainReport, CsvReadsCrlfAndSpaces) {
  MetricsTable t = MetricsTable::from_csv("epoch, loss\r\n1, 0.5\r\n2,0.25\r\n", "hand.csv");
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"epoch", "loss"}));
  EXPECT_EQ(t.column("loss"), (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(MetricsTable::from_csv("", "empty.csv").size(), 0u);
  EXPECT_EQ(MetricsTable().to_csv(), "");
  MetricsTable header_only = MetricsTable::from_csv("a,b\n", "h.csv");
  EXPECT_EQ(header_only.columns().size(), 2u);
  EXPECT_EQ(header_only.to_csv(), "a,b\n");
}

TEST(TrainReport, CsvErrorsNameSourceAndLine) {
  expect_error([] { MetricsTable::from_csv("a,b\n1,2\n3\n", "run/metrics.csv"); },
               {"run/metrics.csv:3", "expected 2 fields", "got 1"});
  expect_error([] { MetricsTable::from_csv("a,b\n1,x2\n", "m.csv"); }, {"m.csv:2", "column 'b'", "'x2'", "not a number"});
  expect_error([] { MetricsTable::from_csv("a,b\n1,\n", "m.csv"); }, {"m.csv:2", "column 'b'", "not a number"});
  expect_error([] { MetricsTable::from_csv("a,a\n", "m.csv"); }, {"m.csv:1", "'a'", "twice"});
  expect_error([] { MetricsTable::from_csv("a,,b\n", "m.csv"); }, {"m.csv:1", "empty"});
}

TEST(TrainReport, TableColumnsAndRowChecks) {
  MetricsTable t;
  t.add_row({{"epoch", 1}, {"loss", 0.5}});
  t.add_row({{"loss", 0.25}, {"epoch", 2}});  // any order, same columns
  EXPECT_EQ(t.column("epoch"), (std::vector<double>{1, 2}));
  EXPECT_EQ(t.column("loss"), (std::vector<double>{0.5, 0.25}));
  EXPECT_TRUE(t.has_column("loss"));
  EXPECT_FALSE(t.has_column("acc"));
  EXPECT_TRUE(t.column("acc").empty());
  expect_error([&] { t.add_row({{"epoch", 3}}); }, {"add_row", "lacks column 'loss'"});
  expect_error([&] { t.add_row({{"epoch", 3}, {"loss", 1}, {"acc", 1}}); }, {"add_row", "'acc'", "epoch, loss"});
  expect_error([&] { MetricsTable().add_row({}); }, {"add_row", "empty"});
  expect_error([&] { MetricsTable().add_row({{"a,b", 1}}); }, {"'a,b'", "comma"});
  expect_error([&] { MetricsTable().add_row({{"a", 1}, {"a", 2}}); }, {"'a'", "twice"});
  EXPECT_EQ(t.size(), 2u);
}

// ---- curves_svg ----

TEST(TrainReport, SvgIsWellFormedWithThreePanels) {
  const std::string svg = ember::train::curves_svg(sample_table(6));
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  for (const char* s : {">Loss<", ">Accuracy / F1<", ">Learning rate<", ">train_loss<", ">val_loss<", ">train_acc<",
                        ">val_acc<", ">lr<", ">epoch<"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  EXPECT_EQ(count_of(svg, "<polyline"), 5u);
  EXPECT_EQ(count_of(svg, ">no data<"), 0u);
  // x ticks 1..6 by 1 in each panel; the lr panel's y ticks are 0.00 to 0.10
  EXPECT_NE(svg.find(">6</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0.10</text>"), std::string::npos);
  EXPECT_EQ(svg, ember::train::curves_svg(sample_table(6)));  // deterministic
}

TEST(TrainReport, SvgOneRowNaNAndAbsentColumns) {
  // One row: dots, no lines.
  const std::string one = ember::train::curves_svg(sample_table(1));
  EXPECT_EQ(xml_problem(one), "");
  EXPECT_EQ(count_of(one, "<polyline"), 0u);
  EXPECT_EQ(count_of(one, "<circle"), 5u);

  // A NaN splits val_loss into two runs: [1, 2] as a line, [4] as a dot.
  MetricsTable t;
  const double losses[] = {1.0, 0.8, NAN, 0.5};
  for (int e = 0; e < 4; ++e) t.add_row({{"epoch", e + 1}, {"val_loss", losses[e]}});
  const std::string nan_svg = ember::train::curves_svg(t);
  EXPECT_EQ(xml_problem(nan_svg), "");
  EXPECT_EQ(count_of(nan_svg, "<polyline"), 1u);
  EXPECT_EQ(count_of(nan_svg, "<circle"), 1u);
  EXPECT_EQ(nan_svg.find("nan"), std::string::npos);
  // Accuracy and lr are absent: their panels say so, with no legend entry.
  EXPECT_EQ(count_of(nan_svg, ">no data<"), 2u);
  EXPECT_EQ(nan_svg.find(">train_loss<"), std::string::npos);
  EXPECT_NE(nan_svg.find(">val_loss<"), std::string::npos);

  // No epoch column: rows are numbered from 1. Empty table: three empty panels.
  MetricsTable no_epoch;
  no_epoch.add_row({{"lr", 0.01}});
  no_epoch.add_row({{"lr", 0.001}});
  EXPECT_EQ(xml_problem(ember::train::curves_svg(no_epoch)), "");
  const std::string empty = ember::train::curves_svg(MetricsTable());
  EXPECT_EQ(xml_problem(empty), "");
  EXPECT_EQ(count_of(empty, ">no data<"), 3u);
}

TEST(TrainReport, SvgSurvivesExtremeValues) {
  MetricsTable t;
  t.add_row({{"epoch", 1}, {"train_loss", 1e300}, {"lr", 1e-12}});
  t.add_row({{"epoch", 2}, {"train_loss", -1e300}, {"lr", 1e-12}});
  t.add_row({{"epoch", 3}, {"train_loss", std::numeric_limits<double>::infinity()}, {"lr", 1e-12}});
  const std::string svg = ember::train::curves_svg(t);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

// ---- report_html ----

TEST(TrainReport, HtmlEscapesEverythingAndIsSelfContained) {
  const std::string html = ember::train::report_html(sample_report());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  // The config cannot close <pre> or open a script.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(count_of(html, "</pre>"), 1u);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<title>mnist &lt;mlp&gt; &amp; friends</title>"), std::string::npos);
  EXPECT_NE(html.find("<th>&lt;dog&gt;</th>"), std::string::npos);
  EXPECT_EQ(html.find("<dog>"), std::string::npos);
  // No external resources: the only URL is the SVG namespace.
  for (const char* s : {"<link", "src=", "href=", "url(", "@import"}) EXPECT_EQ(html.find(s), std::string::npos) << s;
  EXPECT_EQ(count_of(html, "http"), 1u);

  // Sections and their contents.
  for (const char* s : {"<h2>Curves</h2>", "<h2>Final metrics</h2>", "<h2>Confusion matrix</h2>",
                        "<h2>Per-epoch metrics</h2>", "<h2>Configuration</h2>", "<h2>Environment</h2>",
                        "<td class=\"name\">test_acc</td><td class=\"name\">0.98125</td>",
                        "<td class=\"name\">threads</td><td class=\"name\">2</td>", "<th>train_loss</th>"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
  // Confusion cells shaded by their share of the row: 8/10 dark, 1/10 light.
  EXPECT_NE(html.find("<td class=\"dark\" style=\"background-color: rgba(31, 119, 180, 0.800)\">8</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td style=\"background-color: rgba(31, 119, 180, 0.100)\">1</td>"), std::string::npos);

  // The inline SVG is the same as curves.svg, and well-formed.
  const std::string svg = ember::train::curves_svg(sample_report().metrics);
  EXPECT_NE(html.find(svg), std::string::npos);
  EXPECT_EQ(xml_problem(svg), "");
  // Balanced tags of the page's own tables.
  EXPECT_EQ(count_of(html, "<table>"), count_of(html, "</table>"));
  EXPECT_EQ(count_of(html, "<tr>") + count_of(html, "<tr "), count_of(html, "</tr>"));
}

TEST(TrainReport, HtmlIsDeterministicAndHandlesEmptyParts) {
  EXPECT_EQ(ember::train::report_html(sample_report()), ember::train::report_html(sample_report()));
  ReportInput bare;
  const std::string html = ember::train::report_html(bare);
  EXPECT_EQ(html.find("Confusion matrix"), std::string::npos);
  EXPECT_EQ(html.find("Final metrics"), std::string::npos);
  EXPECT_NE(html.find("<h2>Curves</h2>"), std::string::npos);
  // Without class names the classes are numbered.
  ReportInput numbered = sample_report();
  numbered.class_names.clear();
  EXPECT_NE(ember::train::report_html(numbered).find("<th>0</th><th>1</th>"), std::string::npos);
}

TEST(TrainReport, HtmlRejectsInconsistentConfusion) {
  ReportInput in = sample_report();
  in.class_names = {"only-one"};
  expect_error([&] { ember::train::report_html(in); }, {"report_html", "1 class names", "2 x 2"});
  in = sample_report();
  in.confusion = {{1, 2}, {3}};
  expect_error([&] { ember::train::report_html(in); }, {"report_html", "square", "row 1"});
}

// Issue 19: a header (start, duration, command line, data sizes, versions),
// per-step curves from steps.csv, a compact per-class table, and a page that
// fits 1280 px (Note [report width]).
TEST(TrainReport, HtmlHasHeaderStepCurvesAndPerClassTable) {
  ReportInput in = sample_report();
  in.header = {{"started", "2026-12-05T06:00:00Z"}, {"duration", "3m05s"}, {"command line", "ember train <x>.yaml"},
               {"data", "300 train, 0 validation, 50 test"}, {"versions", "ember 0.1.0 (abc), oneDNN 3.0.0"}};
  in.final_metrics.insert(in.final_metrics.end(), {{"test_precision[cat]", 0.75},
                                                   {"test_recall[cat]", 0.8},
                                                   {"test_f1[cat]", 0.5},
                                                   {"test_precision[<dog>]", 0.25},
                                                   {"test_recall[<dog>]", 0.9},
                                                   {"test_f1[<dog>]", 0.125}});
  in.steps.add_row({{"step", 10}, {"epoch", 1}, {"train_loss", 2.0}, {"train_acc", 0.3}, {"train_f1", 0.2},
                    {"images_per_s", 800}});
  in.steps.add_row({{"step", 20}, {"epoch", 1}, {"train_loss", 1.5}, {"train_acc", 0.5}, {"train_f1", 0.4},
                    {"images_per_s", 900}});
  in.steps.add_row({{"step", 30}, {"epoch", 2}, {"train_loss", 1.0}, {"train_acc", 0.6}, {"train_f1", 0.55},
                    {"images_per_s", 950}});
  const std::string html = ember::train::report_html(in);

  // The header comes before the curves, escaped.
  const size_t header = html.find("<table class=\"header\">");
  ASSERT_NE(header, std::string::npos);
  EXPECT_LT(header, html.find("<h2>Curves</h2>"));
  for (const char* s : {"<th class=\"name\">started</th><td>2026-12-05T06:00:00Z</td>",
                        "<th class=\"name\">duration</th><td>3m05s</td>",
                        "<th class=\"name\">command line</th><td>ember train &lt;x&gt;.yaml</td>",
                        "<th class=\"name\">data</th><td>300 train, 0 validation, 50 test</td>",
                        "<th class=\"name\">versions</th><td>ember 0.1.0 (abc), oneDNN 3.0.0</td>"})
    EXPECT_NE(html.find(s), std::string::npos) << s;

  // Per-step curves: loss, accuracy and F1, throughput against step, as steps_svg draws them.
  const std::string steps = ember::train::steps_svg(in.steps);
  EXPECT_EQ(xml_problem(steps), "");
  EXPECT_NE(html.find("<h2>Per-step curves</h2>\n" + steps), std::string::npos);
  for (const char* s : {">Loss per step<", ">Accuracy / F1 per step<", ">Throughput (images/s)<", ">step<", ">30<",
                        ">train_f1<"})
    EXPECT_NE(steps.find(s), std::string::npos) << s;
  EXPECT_EQ(count_of(steps, "<polyline"), 4u);

  // Per-class values leave the final-metrics table for one row per class,
  // with the support from the confusion matrix's rows (10 and 10).
  EXPECT_EQ(html.find("test_f1[cat]"), std::string::npos);
  EXPECT_NE(html.find("<h2>Per class (test)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"name\">cat</td><td>0.7500</td><td>0.8000</td><td>0.5000</td><td>10</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"name\">&lt;dog&gt;</td><td>0.2500</td><td>0.9000</td><td>0.1250</td><td>10</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"name\">test_acc</td>"), std::string::npos);

  // 1280 px: a capped body, and the wide per-epoch table scrolls in its own box.
  EXPECT_NE(html.find("max-width: 1280px"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"wide\"><table>\n<tr><th>epoch</th>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<table"), count_of(html, "</table>"));
  EXPECT_EQ(count_of(html, "<tr>") + count_of(html, "<tr "), count_of(html, "</tr>"));

  // No steps: no per-step section.
  in.steps = MetricsTable();
  EXPECT_EQ(ember::train::report_html(in).find("Per-step curves"), std::string::npos);
}

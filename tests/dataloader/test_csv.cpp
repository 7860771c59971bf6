// CsvDataset: parsing, label mapping, train-only standardisation, bad rows.
#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::TempDir;
using ember::testing::write_text;

namespace {
CsvOptions opts(std::string label, int64_t num_classes = -1, std::vector<std::string> classes = {}) {
  CsvOptions o;
  o.label_column = std::move(label);
  o.num_classes = num_classes;
  o.classes = std::move(classes);
  return o;
}
}  // namespace

TEST(DataCsv, ReadsFeaturesAndNamedLabels) {
  TempDir dir;
  write_text(dir.file("t.csv"), "a,species,b\n1,cat,2\n3,dog,4.5\r\n\n-1e1,cat,\"6\"\n");
  CsvDataset ds(dir.file("t.csv"), opts("species"));
  EXPECT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.feature_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"cat", "dog"}));
  expect_values(ds.features(), {3, 2}, {1, 2, 3, 4.5, -10, 6});
  expect_values(ds.labels(), {3}, {0, 1, 0});
  Sample s = ds.get(1);
  expect_values(s[0].tensor(), {2}, {3, 4.5});
  EXPECT_EQ(s[1].tensor().item<int64_t>(), 1);
  // A test split maps names with the training classes.
  write_text(dir.file("test.csv"), "a,species,b\n0,dog,0\n");
  CsvDataset test(dir.file("test.csv"), opts("species", -1, ds.classes()));
  expect_values(test.labels(), {1}, {1});
  write_text(dir.file("bad_label.csv"), "a,species,b\n0,cow,0\n");
  expect_error([&] { CsvDataset(dir.file("bad_label.csv"), opts("species", -1, ds.classes())); },
               {"bad_label.csv", "line 2", "'cow'", "[cat, dog]"});
}

TEST(DataCsv, StandardisationUsesTrainRowsOnly) {
  TempDir dir;
  write_text(dir.file("t.csv"), "x,y,label\n0,5,0\n2,5,1\n4,5,0\n100,7,1\n");
  CsvDataset ds(dir.file("t.csv"), opts("label", 2));
  // Train rows 0..2: x mean 2, population std sqrt(8/3); y constant (std -> 1).
  Standardizer s = ds.fit_standardizer({0, 1, 2});
  expect_values(s.mean, {2}, {2, 5});
  expect_values(s.std, {2}, {std::sqrt(8.0 / 3.0), 1}, 1e-6);
  ds.standardize(s);
  const double sd = std::sqrt(8.0 / 3.0);
  expect_values(ds.features(), {4, 2}, {-2 / sd, 0, 0, 0, 2 / sd, 0, 98 / sd, 2}, 1e-5);
}

TEST(DataCsv, BadRowsNameFileAndLine) {
  TempDir dir;
  write_text(dir.file("fields.csv"), "a,b,label\n1,2,0\n1,0\n");
  expect_error([&] { CsvDataset(dir.file("fields.csv"), opts("label")); },
               {"fields.csv", "line 3", "expected 3 fields", "got 2"});
  write_text(dir.file("nan.csv"), "a,b,label\n1,2,0\n1,abc,1\n");
  expect_error([&] { CsvDataset(dir.file("nan.csv"), opts("label")); },
               {"nan.csv", "line 3", "column 'b'", "non-numeric value 'abc'"});
  write_text(dir.file("empty.csv"), "a,b,label\n1,,0\n");
  expect_error([&] { CsvDataset(dir.file("empty.csv"), opts("label")); },
               {"empty.csv", "line 2", "non-numeric value ''"});
  write_text(dir.file("range.csv"), "a,label\n1,0\n2,5\n");
  expect_error([&] { CsvDataset(dir.file("range.csv"), opts("label", 3)); },
               {"range.csv", "line 3", "label 5 is out of range [0, 3)"});
  expect_error([&] { CsvDataset(dir.file("range.csv"), opts("target")); },
               {"no column 'target'", "[a, label]"});
  expect_error([&] { CsvDataset(dir.file("missing.csv"), opts("label")); },
               {"missing.csv", "no such file"});
}

TEST(DataCsv, ValuesThatOverflowFloat32NameFileLineAndColumn) {
  TempDir dir;
  // 1e39 is a finite double but inf as float32: training would then fail
  // with a non-finite loss and suggest a lower learning rate.
  write_text(dir.file("big.csv"), "a,b,label\n1,2,0\n3,1e39,1\n");
  expect_error([&] { CsvDataset(dir.file("big.csv"), opts("label")); },
               {"big.csv", "line 3", "column 'b'", "'1e39'", "overflows float32"});
  write_text(dir.file("negbig.csv"), "a,label\n-4e38,0\n");
  expect_error([&] { CsvDataset(dir.file("negbig.csv"), opts("label")); }, {"line 2", "column 'a'", "overflows"});
  CsvOptions reg = opts("y");
  reg.regression = true;
  write_text(dir.file("bigy.csv"), "a,y\n1,2\n1,1e39\n");
  expect_error([&] { CsvDataset(dir.file("bigy.csv"), reg); }, {"bigy.csv", "line 3", "target '1e39'", "overflows"});
  // The largest float32 and tiny values are fine.
  write_text(dir.file("edge.csv"), "a,label\n3.4e38,0\n1e-50,1\n");
  CsvDataset ok(dir.file("edge.csv"), opts("label"));
  EXPECT_FLOAT_EQ(ok.features().index({0, 0}).item<float>(), 3.4e38f);
  EXPECT_EQ(ok.features().index({1, 0}).item<float>(), 0.0f);
}

TEST(DataCsv, HeaderOnlyAndFeaturelessFilesAreRefused) {
  TempDir dir;
  write_text(dir.file("header.csv"), "a,b,label\n\n");
  expect_error([&] { CsvDataset(dir.file("header.csv"), opts("label")); },
               {"header.csv", "has a header but no data rows"});
  write_text(dir.file("onlylabel.csv"), "label\n0\n1\n");
  expect_error([&] { CsvDataset(dir.file("onlylabel.csv"), opts("label")); },
               {"onlylabel.csv", "no feature columns besides the label 'label'"});
  write_text(dir.file("twice.csv"), "a,label,a\n1,0,2\n");
  expect_error([&] { CsvDataset(dir.file("twice.csv"), opts("label")); },
               {"twice.csv", "line 1", "column name 'a' appears twice", "columns 1 and 3"});
}

TEST(DataCsv, NamedLabelWhereIntegerIdsAreExpectedIsRefused) {
  TempDir dir;
  // A test split of integer-labelled training data (num_classes given):
  // a name would otherwise become a class of its own, silently.
  write_text(dir.file("names.csv"), "a,label\n1,0\n2,cat\n");
  expect_error([&] { CsvDataset(dir.file("names.csv"), opts("label", 3)); },
               {"names.csv", "line 3", "label 'cat'", "not an integer class id in [0, 3)"});
  // Without num_classes, names are classes as before.
  CsvDataset named(dir.file("names.csv"), opts("label"));
  EXPECT_EQ(named.classes(), (std::vector<std::string>{"0", "cat"}));
}

// data.label_column by index (0 = first, -1 = last), with or without a
// header; auto detects a header by a non-numeric cell outside the label.
TEST(DataCsv, LabelByIndexWithAndWithoutHeader) {
  TempDir dir;
  write_text(dir.file("plain.csv"), "0.5,1,2\n1.5,3,0\n");
  CsvOptions last;
  last.label_index = -1;
  CsvDataset a(dir.file("plain.csv"), last);  // auto: no header
  EXPECT_EQ(a.feature_names(), (std::vector<std::string>{"0", "1"}));
  expect_values(a.features(), {2, 2}, {0.5, 1, 1.5, 3});
  expect_values(a.labels(), {2}, {2, 0});
  CsvOptions first;
  first.label_index = 0;
  CsvDataset b(dir.file("plain.csv"), first);
  expect_values(b.features(), {2, 2}, {1, 2, 3, 0});
  // Named labels without a header: the label cell does not make a header.
  write_text(dir.file("names.csv"), "cat,1,2\ndog,3,4\n");
  CsvDataset c(dir.file("names.csv"), first);
  EXPECT_EQ(c.size(), 2);
  EXPECT_EQ(c.classes(), (std::vector<std::string>{"cat", "dog"}));
  // A header: auto finds it; header=false reads it as data (and fails on it).
  write_text(dir.file("head.csv"), "x,y,label\n1,2,1\n3,4,0\n");
  CsvDataset d(dir.file("head.csv"), last);
  EXPECT_EQ(d.feature_names(), (std::vector<std::string>{"x", "y"}));
  expect_values(d.labels(), {2}, {1, 0});
  last.header = false;
  expect_error([&] { CsvDataset(dir.file("head.csv"), last); }, {"head.csv", "line 1", "non-numeric value 'x'"});
  // header=true on a file without one drops its first row.
  last.header = true;
  EXPECT_EQ(CsvDataset(dir.file("plain.csv"), last).size(), 1);
  CsvOptions far;
  far.label_index = 3;
  expect_error([&] { CsvDataset(dir.file("plain.csv"), far); },
               {"plain.csv", "line 1", "label column index 3 is out of range for 3 columns"});
  far.label_index = -4;
  expect_error([&] { CsvDataset(dir.file("plain.csv"), far); }, {"index -4 is out of range"});
  CsvOptions named = opts("label");
  named.header = false;
  expect_error([&] { CsvDataset(dir.file("plain.csv"), named); }, {"plain.csv", "without a header", "by index"});
}

// .csv.gz is read through zlib (detail::read_file_bytes); a corrupt one names the file.
TEST(DataCsv, GzipFilesAreReadDirectly) {
  TempDir dir;
  // gzip.compress(b"a,b,label\n1,2,0\n3,4,1\n", mtime=0), Python's gzip module.
  const std::string bytes(
      "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x4b\xd4\x49\xd2\xc9\x49\x4c\x4a\xcd\xe1\x32\xd4\x31\xd2"
      "\x31\xe0\x32\xd6\x31\xd1\x31\xe4\x02\x00\x48\x6b\xf7\xe6\x16\x00\x00\x00", 42);
  write_text(dir.file("t.csv.gz"), bytes);
  CsvDataset ds(dir.file("t.csv.gz"), opts("label"));
  expect_values(ds.features(), {2, 2}, {1, 2, 3, 4});
  expect_values(ds.labels(), {2}, {0, 1});
  // The same bytes cut short: truncated gzip data.
  write_text(dir.file("cut.csv.gz"), bytes.substr(0, bytes.size() / 2));
  expect_error([&] { CsvDataset(dir.file("cut.csv.gz"), opts("label")); }, {"cut.csv.gz"});
}

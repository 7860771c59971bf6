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

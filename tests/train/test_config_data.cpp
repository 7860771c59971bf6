// Data files named by a config: what is wrong with them is a ConfigError at
// data setup naming the key, the file, the line and the problem; and a run
// whose every step was skipped as non-finite fails instead of reporting 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/train/config.h"
#include "ember/train/data_setup.h"
#include "ember/train/trainer.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ember_config_data_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// Rows "x0,x1,label" with labels cycling through 0..classes-1.
std::string rows(int n, int classes) {
  std::string s = "x0,x1,label\n";
  for (int i = 0; i < n; ++i) s += fmt::format("{},{},{}\n", i % 7, (i * 3) % 5, i % classes);
  return s;
}

Config csv_config(const std::string& train, const std::string& test, std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"model.name=mlp",       "model.hidden=[8]",     "data.dataset=csv",
                                "data.train_file=" + train, "data.test_file=" + test, "data.batch_size=4",
                                "data.num_workers=0",  "log.progress=none",    "train.threads=1",
                                "train.epochs=1"};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_config("", o);
}

}  // namespace

TEST(ConfigData, CsvTestLabelOutsideTheTrainingClassesFailsAtSetup) {
  fs::path d = fresh_dir("labels");
  std::string train = write(d / "train.csv", rows(30, 3));
  std::string test = write(d / "test.csv", "x0,x1,label\n1,2,0\n3,4,2\n5,6,7\n");
  try {
    build_data(csv_config(train, test));
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    for (const char* s : {"data.test_file", "test.csv", "line 4", "label 7", "out of range [0, 3)", "train.csv"})
      EXPECT_NE(msg.find(s), std::string::npos) << s << "\n" << msg;
  }
  // A named label where the training labels are integer ids.
  std::string named = write(d / "named.csv", "x0,x1,label\n1,2,0\n3,4,dog\n");
  expect_error([&] { build_data(csv_config(train, named)); },
               {"data.test_file", "named.csv", "line 3", "label 'dog'", "not an integer class id in [0, 3)"});
  // Labels that are not class ids at all (a zip code column).
  std::string zip = write(d / "zip.csv", "x0,x1,label\n1,2,0\n3,4,90210000\n");
  expect_error([&] { build_data(csv_config(zip, test)); },
               {"data.train_file", "zip.csv", "label 90210000", "class ids"});
  // The test labels within the training classes load.
  std::string ok = write(d / "ok.csv", "x0,x1,label\n1,2,0\n3,4,2\n");
  DataBundle b = build_data(csv_config(train, ok));
  EXPECT_EQ(b.info.num_classes, 3);
  EXPECT_EQ(b.test->size(), 2);
}

TEST(ConfigData, BadCsvFilesAreConfigErrorsNamingTheKey) {
  fs::path d = fresh_dir("csv");
  std::string good = write(d / "good.csv", rows(30, 2));
  std::string header = write(d / "header.csv", "x0,x1,label\n");
  expect_error([&] { build_data(csv_config(header, good)); },
               {"data.train_file", "header.csv", "no data rows"});
  EXPECT_THROW(build_data(csv_config(good, header)), ConfigError);
  std::string big = write(d / "big.csv", "x0,x1,label\n1,2,0\n1e39,2,1\n");
  expect_error([&] { build_data(csv_config(big, good)); },
               {"data.train_file", "big.csv", "line 3", "column 'x0'", "'1e39'", "overflows float32"});
  EXPECT_THROW(build_data(csv_config(big, good)), ConfigError);
  // Too few rows for the validation fraction: a config error too.
  std::string two = write(d / "two.csv", "x0,x1,label\n1,2,0\n3,4,1\n");
  try {
    build_data(csv_config(two, good, {"data.val_fraction=0.2"}));
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.val_fraction = 0.2 leaves no samples for validation of 2"),
              std::string::npos) << e.what();
  }
}

TEST(ConfigData, BadTextFilesAreConfigErrorsNamingTheKey) {
  fs::path d = fresh_dir("text");
  std::string train = write(d / "train.txt", "pos\tgood fun\nneg\tbad dull\npos\tgreat\n");
  std::string test = write(d / "test.txt", "pos\tfun\nmeh\tso so\n");
  auto cfg = [&](const std::string& tr, const std::string& te) {
    return load_config("", {"model.name=lstm_classifier", "data.dataset=text", "data.train_file=" + tr,
                            "data.test_file=" + te, "data.num_workers=0", "data.val_fraction=0"});
  };
  expect_error([&] { build_data(cfg(train, test)); },
               {"data.test_file", "test.txt", "line 2", "label 'meh'", "[neg, pos]", "train.txt"});
  EXPECT_THROW(build_data(cfg(train, test)), ConfigError);
  std::string empty = write(d / "empty.txt", "\n\n");
  expect_error([&] { build_data(cfg(empty, train)); }, {"data.train_file", "empty.txt", "no samples"});
}

TEST(ConfigData, EveryStepSkippedAsNonFiniteFailsTheRun) {
  // Regression targets of 3e38 fit float32 but their squared error is inf:
  // every step's loss is non-finite, so train.nonfinite_loss=skip skips all.
  fs::path d = fresh_dir("skip");
  std::string s = "a,y\n";
  for (int i = 0; i < 16; ++i) s += fmt::format("{},3e38\n", i);
  std::string train = write(d / "train.csv", s), test = write(d / "test.csv", s);
  Config c = csv_config(train, test, {"data.task=regression", "data.label_column=y", "train.nonfinite_loss=skip",
                                      "data.val_fraction=0", "train.checkpoint.monitor=train_loss"});
  std::ostringstream out;
  TrainOptions opt;
  opt.out = &out;
  opt.run_dir = (d / "run").string();
  try {
    TrainResult r = Trainer(std::move(c), opt).fit();
    ADD_FAILURE() << "expected a RunError; the run finished with " << out.str();
  } catch (const RunError& e) {
    std::string msg = e.what();
    for (const char* n : {"epoch 1", "every one of the 4 steps had a non-finite loss", "train.nonfinite_loss=skip",
                          "no training loss"})
      EXPECT_NE(msg.find(n), std::string::npos) << n << "\n" << msg;
  }
  EXPECT_NE(out.str().find("skipped 4 steps with a non-finite loss"), std::string::npos) << out.str();
  EXPECT_FALSE(fs::exists(d / "run" / "best.ckpt"));  // nothing was trained, nothing is "best"
}

// data.label_column as an index and data.header through the config.
TEST(ConfigData, CsvLabelByIndexAndHeaderKeys) {
  fs::path d = fresh_dir("index");
  std::string s;
  for (int i = 0; i < 20; ++i) s += fmt::format("{},{},{}\n", i % 3, i % 7, (i * 3) % 5);
  std::string plain = write(d / "plain.csv", s);  // label first, no header
  DataBundle b = build_data(csv_config(plain, plain, {"data.label_column=0", "data.val_fraction=0"}));
  EXPECT_EQ(b.info.input_shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(b.info.num_classes, 3);
  EXPECT_EQ(b.train->size(), 20);
  // The last column (0..4) as the label.
  DataBundle last = build_data(csv_config(plain, plain, {"data.label_column=-1", "data.header=false",
                                                          "data.val_fraction=0"}));
  EXPECT_EQ(last.info.num_classes, 5);
  // header=false with a label named: refused, naming the keys.
  expect_error([&] { build_data(csv_config(plain, plain, {"data.header=false"})); },
               {"data.header=false", "data.label_column", "by index"});
  expect_error([&] { build_data(csv_config(plain, plain, {"data.label_column=5"})); },
               {"data.train_file", "plain.csv", "index 5 is out of range for 3 columns"});
  expect_error([&] { load_config("", {"data.header=maybe"}); }, {"data.header", "auto, true, false"});
}

// data.image_shape: pixel columns become [C, H, W] images, so a CNN reads them.
TEST(ConfigData, CsvImageShapeReshapesPixelColumns) {
  fs::path d = fresh_dir("image");
  std::string s = "label";
  for (int p = 0; p < 16; ++p) s += fmt::format(",p{}", p);
  s += "\n";
  for (int i = 0; i < 12; ++i) {
    s += std::to_string(i % 2);
    for (int p = 0; p < 16; ++p) s += fmt::format(",{}", (i * 16 + p) % 9);
    s += "\n";
  }
  std::string f = write(d / "pixels.csv", s);
  DataBundle b = build_data(csv_config(f, f, {"data.image_shape=[1, 4, 4]", "data.val_fraction=0"}));
  EXPECT_EQ(b.info.input_shape, (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(b.train->get(0)[0].tensor().sizes().vec(), (std::vector<int64_t>{1, 4, 4}));
  Config cnn = load_config("", {"model.name=cnn", "model.channels=[2]", "model.hidden=4"});
  EXPECT_EQ(build_model(cnn, b.info)->forward(b.train->get(0)[0].tensor().unsqueeze(0)).sizes().vec(),
            (std::vector<int64_t>{1, 2}));
  expect_error([&] { build_data(csv_config(f, f, {"data.image_shape=[1, 3, 4]"})); },
               {"data.image_shape [1, 3, 4] holds 12 values", "pixels.csv", "16 feature columns"});
}

// data.split_file: the user's train/val rows instead of the seeded fraction.
TEST(ConfigData, SplitFileChoosesTheTrainAndValidationRows) {
  fs::path d = fresh_dir("split");
  std::string s = "x0,x1,label\n";
  for (int i = 0; i < 10; ++i) s += fmt::format("{},{},{}\n", i, 100 + i, i % 2);  // x0 = the row's index
  std::string f = write(d / "rows.csv", s);
  std::string split = write(d / "split.json", R"({"train": [9, 0, 2, 4, 6, 8], "val": [1, 3]})");
  DataBundle b = build_data(csv_config(f, f, {"data.split_file=" + split}));
  ASSERT_EQ(b.train->size(), 6);
  ASSERT_TRUE(b.val);
  ASSERT_EQ(b.val->size(), 2);
  // Standardised features keep the order: x0 of val row 0 < val row 1, and
  // train row 0 (row 9) is the largest of the train rows.
  auto x0 = [](const data::DatasetPtr& ds, int64_t i) { return ds->get(i)[0].tensor()[0].item<double>(); };
  EXPECT_LT(x0(b.val, 0), x0(b.val, 1));
  for (int64_t i = 1; i < 6; ++i) EXPECT_GT(x0(b.train, 0), x0(b.train, i));
  // Standardisation uses the train rows only: their x0 (9, 0, 2, 4, 6, 8) has mean 29/6.
  double mean = 0;
  for (int64_t i = 0; i < 6; ++i) mean += x0(b.train, i);
  EXPECT_NEAR(mean / 6, 0.0, 1e-6);
  // Without "val": no validation split.
  std::string no_val = write(d / "no_val.json", R"({"train": [0, 1, 2]})");
  DataBundle t = build_data(csv_config(f, f, {"data.split_file=" + no_val}));
  EXPECT_EQ(t.train->size(), 3);
  EXPECT_FALSE(t.val);
  // Bad files and settings: errors name the file, the list and the entry.
  auto bad = [&](const std::string& name, const std::string& json, std::vector<std::string> want) {
    std::string p = write(d / name, json);
    want.insert(want.begin(), "data.split_file '" + p + "'");
    try {
      build_data(csv_config(f, f, {"data.split_file=" + p}));
      ADD_FAILURE() << name << ": no error";
    } catch (const ConfigError& e) {
      for (const std::string& w : want) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  };
  bad("range.json", R"({"train": [0, 10]})", {"\"train\"[1] = 10 is not a row of the training data (rows 0..9)"});
  bad("negative.json", R"({"train": [0], "val": [-1]})", {"\"val\"[0] = -1"});
  bad("huge.json", R"({"train": [18446744073709551615]})", {"\"train\"[0] = 18446744073709551615"});
  bad("twice.json", R"({"train": [0, 1], "val": [1]})", {"row 1 appears twice", "\"val\"[0]", "\"train\""});
  bad("float.json", R"({"train": [0.5]})", {"\"train\"[0] must be an integer row index, got 0.5"});
  bad("key.json", R"({"train": [0], "test": [1]})", {"unknown key \"test\"", "data.test_file"});
  bad("empty.json", R"({"train": []})", {"\"train\" lists no rows"});
  bad("broken.json", R"({"train": [0, )", {"not valid JSON"});
  bad("list.json", R"([0, 1])", {"expected an object"});
  expect_error([&] { build_data(csv_config(f, f, {"data.split_file=" + (d / "missing.json").string()})); },
               {"missing.json", "cannot read it"});
  expect_error([&] { build_data(csv_config(f, f, {"data.split_file=" + split, "data.val_fraction=0.2"})); },
               {"data.split_file", "data.val_fraction (0.2) are both set", "~data.val_fraction"});
  // The rows are those left after data.limit_train.
  expect_error([&] { build_data(csv_config(f, f, {"data.split_file=" + split, "data.limit_train=5"})); },
               {"\"train\"[0] = 9 is not a row of the training data (rows 0..4)"});
}

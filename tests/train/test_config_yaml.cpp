// Config files as untrusted input: bounded YAML (aliases, depth, size),
// duplicate and complex keys, and range checks that name file:line.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "ember/train/config.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// "Billion laughs" with mappings: each level names the previous one four
// times, so `levels` lines expand to 4^levels entries.
std::string alias_bomb(int levels) {
  std::string y = "a0: &a0 {x: 1, y: 1, z: 1, w: 1}\n";
  for (int i = 1; i < levels; ++i)
    y += fmt::format("a{}: &a{} {{p: *a{}, q: *a{}, r: *a{}, s: *a{}}}\n", i, i, i - 1, i - 1, i - 1, i - 1);
  return y;
}

double seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(ConfigYaml, AliasBombIsRefusedBeforeExpanding) {
  // 9 levels expand to 4^9 = 262144 entries; the limit stops at 10000 nodes.
  double s = seconds([] {
    expect_error([] { flatten_yaml(alias_bomb(9), "bomb.yaml"); },
                 {"bomb.yaml:", "expands to more than 10000 nodes"});
  });
  EXPECT_LT(s, 0.5);
  // 40 levels would be 4^40 entries; the cost is that of reading 40 lines.
  s = seconds([] { expect_error([] { flatten_yaml(alias_bomb(40), "bomb.yaml"); }, {"expands to more than"}); });
  EXPECT_LT(s, 0.5);
  // A config may still use a few aliases.
  auto entries = flatten_yaml("base: &lr 0.5\noptim:\n  lr: *lr\n  betas: [*lr, *lr]\n", "ok.yaml");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[1].key, "optim.lr");
  EXPECT_EQ(entries[1].text, "0.5");
  EXPECT_EQ(entries[2].text, "[0.5, 0.5]");
}

TEST(ConfigYaml, TooManyAliasesAreRefused) {
  std::string y = "a: &a 1\nb: [";
  for (size_t i = 0; i <= kMaxConfigAliases; ++i) y += i ? ", *a" : "*a";
  y += "]\n";
  expect_error([&] { flatten_yaml(y, "many.yaml"); }, {"many.yaml:2:", "more than 100 YAML aliases"});
}

TEST(ConfigYaml, RecursiveAliasIsRefused) {
  // The alias names the mapping that holds it: walking it never ends.
  expect_error([] { flatten_yaml("a: &a {b: *a}\n", "rec.yaml"); }, {"rec.yaml:1:11", "recursive"});
  expect_error([] { flatten_yaml("a: &a\n  b:\n    c: *a\n", "rec2.yaml"); }, {"rec2.yaml:3:8", "recursive"});
  // fuzzsan's finding 4 (a merge key inside its own anchor; ASan stack-overflow before 8473a07).
  const std::string merge = "defaults: &d\n  lr: 0.01\n  <<: *d\n  name: sgd\nmodel:\n  name: mlp\n";
  expect_error([&] { flatten_yaml(merge, "merge.yaml"); }, {"merge.yaml:3:7", "recursive"});
}

TEST(ConfigYaml, NestingDepthIsBounded) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "{a: ";
  deep += "1" + std::string(40, '}') + "\n";
  expect_error([&] { flatten_yaml(deep, "deep.yaml"); }, {"deep.yaml:1:", "nested more than 32 deep"});
  // 100000 levels of '[': refused at depth 32, without deep recursion.
  std::string brackets(100000, '[');
  expect_error([&] { flatten_yaml("a: " + brackets + "\n", "brackets.yaml"); }, {"brackets.yaml:1:", "nested"});
  // Four levels (train.early_stopping.monitor plus the document) are fine.
  auto e = flatten_yaml("train:\n  early_stopping:\n    monitor: val_loss\n", "ok.yaml");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].key, "train.early_stopping.monitor");
}

TEST(ConfigYaml, OversizedFileIsRefusedWithoutReadingItWhole) {
  std::string path = write_temp("ember_cfg_huge.yaml", "# " + std::string(kMaxConfigBytes, 'x') + "\n");
  expect_error([&] { load_config(path, {}); }, {"ember_cfg_huge.yaml", "too large for a config file"});
  std::filesystem::remove(path);
}

TEST(ConfigYaml, DuplicateKeysNameBothLines) {
  expect_error([] { flatten_yaml("optim:\n  lr: 0.1\n  lr: 0.2\n", "dup.yaml"); },
               {"dup.yaml:3:3", "duplicate key 'lr'", "first at line 2"});
  // A section given twice: today's YAML loaders keep the last one silently.
  expect_error([] { flatten_yaml("optim:\n  lr: 0.1\ndata:\n  batch_size: 3\noptim:\n  eps: 1\n", "sec.yaml"); },
               {"sec.yaml:5:1", "duplicate key 'optim'", "first at line 1"});
  // The same option spelt flat and nested.
  expect_error([] { flatten_yaml("optim.lr: 0.1\noptim:\n  lr: 0.2\n", "flat.yaml"); },
               {"flat.yaml:3:3", "config key 'optim.lr' is set twice", "first at flat.yaml:1:1"});
}

TEST(ConfigYaml, ComplexAndNullKeysAreRefused) {
  expect_error([] { flatten_yaml("? [a, b]\n: 1\n", "cx.yaml"); },
               {"cx.yaml:1:3", "must be a plain name, not a sequence"});
  expect_error([] { flatten_yaml("optim:\n  {lr: 1}: 2\n", "cx2.yaml"); },
               {"cx2.yaml:2:3", "not a mapping"});
  expect_error([] { flatten_yaml("~: 1\n", "null.yaml"); }, {"null.yaml:1:1", "not null"});
  // Through load_config the error is a ConfigError (exit 2), not yaml-cpp's
  // "bad conversion".
  std::string path = write_temp("ember_cfg_cx.yaml", "train:\n  ? [epochs]\n  : 3\n");
  EXPECT_THROW(load_config(path, {}), ConfigError);
}

TEST(ConfigYaml, SecondDocumentIsRefused) {
  expect_error([] { flatten_yaml("optim:\n  lr: 0.1\n---\noptim:\n  lr: 0.2\n", "two.yaml"); },
               {"two.yaml", "more than one YAML document"});
  EXPECT_TRUE(flatten_yaml("", "empty.yaml").empty());
  EXPECT_TRUE(flatten_yaml("# only a comment\n", "comment.yaml").empty());
  EXPECT_EQ(flatten_yaml("---\na: 1\n", "one.yaml").size(), 1u);
}

TEST(ConfigYaml, ListItemsMustBeScalars) {
  expect_error([] { flatten_yaml("model:\n  hidden: [[1, 2], 3]\n", "nested.yaml"); },
               {"nested.yaml:2:12", "'model.hidden' must be a list of plain values", "a sequence"});
}

TEST(ConfigRange, FileValuesOutOfRangeNameFileAndLine) {
  std::string thr = write_temp("ember_cfg_threads.yaml", "train:\n  threads: -4\n");
  expect_error([&] { load_config(thr, {}); },
               {"ember_cfg_threads.yaml:2:3", "config key 'train.threads' must be in [0, 1024], got -4"});
  std::string frac = write_temp("ember_cfg_frac.yaml", "data:\n  batch_size: 8\n  val_fraction: 1.5\n");
  expect_error([&] { load_config(frac, {}); },
               {"ember_cfg_frac.yaml:3:3", "'data.val_fraction' must be in [0, 1), got 1.5"});
  std::string betas = write_temp("ember_cfg_betas.yaml", "optim:\n  betas: [0.9, 1.5]\n");
  expect_error([&] { load_config(betas, {}); },
               {"ember_cfg_betas.yaml:2:3", "every item of config key 'optim.betas' must be in [0, 1), got 1.5"});
  std::string drop = write_temp("ember_cfg_drop.yaml", "model:\n  name: mlp\n  dropout: 2\n");
  expect_error([&] { load_config(drop, {}); },
               {"ember_cfg_drop.yaml:3:3", "'model.dropout' must be in [0, 1), got 2.0"});
}

TEST(ConfigRange, NonFiniteAndOutOfRangeOverrides) {
  expect_error([] { load_config("", {"optim.lr=.nan"}); },
               {"command line", "config key 'optim.lr' must be a number, got .nan"});
  expect_error([] { load_config("", {"optim.lr=.inf"}); }, {"'optim.lr' must be in (0, inf), got .inf"});
  expect_error([] { load_config("", {"optim.lr=1e400"}); }, {"'optim.lr' must be in (0, inf), got .inf"});
  expect_error([] { load_config("", {"optim.lr=-0.1"}); }, {"'optim.lr' must be in (0, inf), got -0.1"});
  // lr 0 trains nothing: refused as the issue asks (PyTorch's optimizers take it; ember eval measures a model).
  expect_error([] { load_config("", {"optim.lr=0"}); }, {"'optim.lr' must be in (0, inf), got 0"});
  expect_error([] { load_config("", {"train.threads=-4"}); }, {"'train.threads' must be in [0, 1024], got -4"});
  expect_error([] { load_config("", {"data.batch_size=0"}); }, {"'data.batch_size' must be in [1, inf), got 0"});
  expect_error([] { load_config("", {"train.epochs=0"}); }, {"'train.epochs' must be in [1, inf), got 0"});
  // The bounds themselves are accepted.
  Config c = load_config("", {"optim.lr=1e-30", "train.threads=1024", "data.val_fraction=0", "train.label_smoothing=1"});
  EXPECT_EQ(c.get_int("train.threads"), 1024);
  // A float option without a range still has to be finite; set() checks too.
  Config s(Schema{{"x", ValueType::Float, 1.0, "x"}, {"n", ValueType::Int, int64_t{1}, "n", {}, "(0, 10)"}});
  expect_error([&] { s.apply_override("x=-.inf"); }, {"'x' must be a finite number, got -.inf"});
  expect_error([&] { s.set("n", int64_t{10}); }, {"'n' must be in (0, 10), got 10"});
  s.set("n", int64_t{9});
  EXPECT_EQ(s.get_int("n"), 9);
}

TEST(ConfigRange, SchemaRejectsMalformedRangesAndDefaultsOutsideThem) {
  EXPECT_THROW(Schema({{"x", ValueType::Int, int64_t{1}, "x", {}, "0..3"}}), Error);
  EXPECT_THROW(Schema({{"x", ValueType::Int, int64_t{1}, "x", {}, "[3, 0]"}}), Error);
  EXPECT_THROW(Schema({{"x", ValueType::Int, int64_t{5}, "x", {}, "[0, 3]"}}), Error);
}

TEST(ConfigYaml, CheckpointConfigIsBoundedToo) {
  // The config embedded in a checkpoint goes through the same loader.
  expect_error([] { config_from_yaml(alias_bomb(30), "run/best.ckpt (config)"); },
               {"run/best.ckpt (config):", "expands to more than"});
  expect_error([] { config_from_yaml("train:\n  threads: -4\n", "run/best.ckpt (config)"); },
               {"run/best.ckpt (config):2:3", "train.threads"});
}

TEST(ConfigRange, RangesMatchWhatTheTrainerAccepts) {
  // Each of these passed the config and failed later, at setup, with exit 1.
  expect_error([] { load_config("", {"optim.betas=[0.9]"}); },
               {"command line", "config key 'optim.betas' needs 2 values, got 1 ([0.9])"});
  expect_error([] { load_config("", {"train.early_stopping.patience=0"}); },
               {"'train.early_stopping.patience' must be in [1, inf), got 0"});
  expect_error([] { load_config("", {"model.name=mlp", "model.dropout=1"}); },
               {"'model.dropout' must be in [0, 1), got 1"});
  expect_error([] { load_config("", {"model.name=resnet", "model.depth=50"}); },
               {"config key 'model.depth': ResNet-50 is torchvision's bottleneck net"});
  expect_error([] { load_config("", {"model.name=resnet", "model.depth=21"}); },
               {"config key 'model.depth': expected 18, 34 or 6n + 2 (8, 14, 20, 32, 44, 56, 110, ...), got 21"});
  expect_error([] { load_config("", {"model.name=resnet", "model.depth=2"}); },
               {"'model.depth' must be in [8, 10000], got 2"});
  Config c = load_config("", {"optim.betas=[0.5, 0.6]"});
  EXPECT_EQ(c.get_float_list("optim.betas"), (std::vector<double>{0.5, 0.6}));
}

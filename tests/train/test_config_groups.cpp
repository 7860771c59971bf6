// Config groups (Hydra's): `model=resnet` and a config's `defaults:` list read
// configs/<group>/<choice>.yaml; the order decides which value wins; unknown
// groups and choices name the files that exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/train/config.h"
#include "cli_util.h"
#include "test_util.h"

using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

namespace {

std::string source(const std::string& rel) { return std::string(EMBER_SOURCE_DIR) + "/" + rel; }

// One folder per test: ctest runs the tests of this file in parallel
// processes, which must not delete each other's files.
fs::path scratch() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path p = fs::temp_directory_path() / ("ember_config_groups_" + std::string(test->name()));
  fs::remove_all(p);
  fs::create_directories(p / "model");
  return p;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

// Moving the model, data and optimizer sections into group files changed no
// resolved value: each config equals its pre-groups copy in tests/data.
TEST(ConfigGroups, ReadmeConfigsResolveAsBeforeTheSplit) {
  for (const char* name : {"fashion_mnist_cnn", "fashion_mnist_mlp", "fashion_mnist_resnet", "reviews_lstm",
                           "reviews_transformer"}) {
    Config now = load_config(source(std::string("configs/") + name + ".yaml"), {});
    Config before = load_config(source(std::string("tests/data/config_groups/legacy_") + name + ".yaml"), {});
    EXPECT_EQ(now.to_yaml(), before.to_yaml()) << name;
  }
}

TEST(ConfigGroups, CommandLineChoiceSwapsInTheGroupFile) {
  const std::string cnn = source("configs/fashion_mnist_cnn.yaml");
  Config c = load_config(cnn, {"model=resnet"});
  EXPECT_EQ(c.get_string("model.name"), "resnet");
  EXPECT_EQ(c.get_int("model.depth"), 18);
  EXPECT_EQ(c.get_int("model.width"), 32);  // from configs/model/resnet.yaml, not the zoo's 64
  EXPECT_EQ(c.get_string_list("data.augment"), std::vector<std::string>{"hflip"});  // the config's own keys stay
  EXPECT_EQ(c.get_string("optim.name"), "adam");

  Config m = load_config(source("configs/fashion_mnist_mlp.yaml"), {"optim=sgd", "model=cnn"});
  EXPECT_EQ(m.get_string("optim.name"), "sgd");
  EXPECT_DOUBLE_EQ(m.get_float("optim.lr"), 0.1);
  EXPECT_DOUBLE_EQ(m.get_float("optim.weight_decay"), 0.0005);
  EXPECT_FALSE(m.get_bool("optim.nesterov"));  // sgd_nesterov's key is gone with its file
  EXPECT_EQ(m.get_string("model.name"), "cnn");
  EXPECT_EQ(m.get_int_list("model.channels"), (std::vector<int64_t>{32, 64}));
}

TEST(ConfigGroups, KeyOverridesWinOverGroupsWhateverTheirPlace) {
  const std::string cnn = source("configs/fashion_mnist_cnn.yaml");
  for (const auto& overrides : {std::vector<std::string>{"model=resnet", "model.width=16"},
                                std::vector<std::string>{"model.width=16", "model=resnet"}}) {
    Config c = load_config(cnn, overrides);
    EXPECT_EQ(c.get_string("model.name"), "resnet");
    EXPECT_EQ(c.get_int("model.width"), 16);
  }
  // Two choices of one group: the later wins.
  EXPECT_EQ(load_config(cnn, {"model=resnet", "model=mlp"}).get_string("model.name"), "mlp");
  // model.name on the command line selects the schema too.
  EXPECT_EQ(load_config(cnn, {"model.name=mlp", "model.hidden=[8]"}).get_int_list("model.hidden"),
            std::vector<int64_t>{8});
}

TEST(ConfigGroups, SelfDecidesWhetherTheFileOrItsDefaultsWin) {
  fs::path d = scratch();
  write(d / "model" / "small.yaml", "name: mlp\nhidden: [8]\ndropout: 0.5\n");
  write(d / "last.yaml", "defaults:\n  - model: small\nmodel:\n  dropout: 0.25\n");
  write(d / "first.yaml", "defaults:\n  - _self_\n  - model: small\nmodel:\n  dropout: 0.25\n");
  EXPECT_DOUBLE_EQ(load_config((d / "last.yaml").string(), {}).get_float("model.dropout"), 0.25);
  EXPECT_DOUBLE_EQ(load_config((d / "first.yaml").string(), {}).get_float("model.dropout"), 0.5);
  EXPECT_EQ(load_config((d / "first.yaml").string(), {}).get_int_list("model.hidden"), std::vector<int64_t>{8});
  // A group the defaults list does not name, chosen on the command line,
  // applies after the file's keys.
  write(d / "plain.yaml", "model:\n  name: mlp\n  dropout: 0.25\n");
  EXPECT_DOUBLE_EQ(load_config((d / "plain.yaml").string(), {"model=small"}).get_float("model.dropout"), 0.5);
  EXPECT_EQ(config_group_choices((d / "plain.yaml").string(), "model"), std::vector<std::string>{"small"});
}

TEST(ConfigGroups, UnknownGroupsAndChoicesNameTheFilesThatExist) {
  const std::string cnn = source("configs/fashion_mnist_cnn.yaml");
  expect_error([&] { load_config(cnn, {"model=resnt"}); },
               {"command line: model=resnt: config group 'model' has no choice 'resnt'",
                "configs/model/resnt.yaml does not exist",
                "configs/model/{cnn,lstm_classifier,mlp,resnet,transformer_classifier}.yaml", "did you mean 'resnet'?"});
  expect_error([&] { load_config(cnn, {"lr=0.1"}); },
               {"there is no config group 'lr' (no folder ", "the groups are bench, data, model, optim",
                "use its dotted key, e.g. optim.lr=0.1"});
  expect_error([&] { load_config(cnn, {"model=../x"}); }, {"plain names"});
  fs::path d = scratch();
  write(d / "bad.yaml", "defaults:\n  - model: nothere\n");
  expect_error([&] { load_config((d / "bad.yaml").string(), {}); },
               {"bad.yaml:2:5: model=nothere", "has no choice 'nothere'"});
  write(d / "item.yaml", "defaults:\n  - 3\n");
  expect_error([&] { load_config((d / "item.yaml").string(), {}); },
               {"item.yaml:2:5", "a defaults entry is '- group: choice'", "got '3'"});
  write(d / "twice.yaml", "defaults:\n  - model: a\n  - model: b\n");
  expect_error([&] { load_config((d / "twice.yaml").string(), {}); },
               {"twice.yaml:3:5", "config group 'model' appears twice", "first at"});
  write(d / "model" / "nested.yaml", "defaults:\n  - optim: adam\nname: mlp\n");
  expect_error([&] { load_config((d / "bad.yaml").string(), {"model=nested"}); },
               {"nested.yaml:2:5", "a group file cannot have a defaults list"});
  // A group file's keys are checked like any others, with their file and line.
  write(d / "model" / "typo.yaml", "name: mlp\nhiden: [8]\n");
  expect_error([&] { load_config((d / "bad.yaml").string(), {"model=typo"}); },
               {"typo.yaml:2:1", "unknown config key 'model.hiden'", "did you mean 'model.hidden'"});
}

TEST(ConfigGroups, CliExitsWith2OnAnUnknownChoice) {
  auto r = ember::testing::run_cli("train " + source("configs/fashion_mnist_cnn.yaml") + " model=resnt", 60);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("ember: error: command line: model=resnt: config group 'model' has no choice 'resnt'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("configs/model/{cnn,lstm_classifier,mlp,resnet,transformer_classifier}.yaml"),
            std::string::npos)
      << r.output;
}

// Hydra's `~key`: back to the default whatever the group or file set, so the
// bundled configs' data.val_fraction (configs/data/fashion_mnist.yaml) can
// give way to data.split_file; deleting what nothing set, or with a value, is
// refused naming the argument.
TEST(ConfigGroups, TildeDeletesAKeyTheConfigSets) {
  const std::string mlp = source("configs/fashion_mnist_mlp.yaml");
  ASSERT_TRUE(load_config(mlp, {}).is_set("data.val_fraction"));
  Config c = load_config(mlp, {"~data.val_fraction", "data.split_file=split.json"});
  EXPECT_FALSE(c.is_set("data.val_fraction"));
  EXPECT_DOUBLE_EQ(c.get_float("data.val_fraction"), load_config("", {}).get_float("data.val_fraction"));  // default
  EXPECT_EQ(c.get_string("data.split_file"), "split.json");
  // A later override sets it again.
  EXPECT_DOUBLE_EQ(load_config(mlp, {"~data.val_fraction", "data.val_fraction=0.3"}).get_float("data.val_fraction"),
                   0.3);
  expect_error([&] { load_config(mlp, {"~train.label_smoothing"}); },
               {"'~train.label_smoothing'", "does not set 'train.label_smoothing'", "nothing to delete"});
  expect_error([&] { load_config(mlp, {"~data.val_fraction=0.1"}); },
               {"'~data.val_fraction=0.1'", "without a value"});
}

// Hydra's `+key=value` adds a key the config does not set; one it sets is
// refused naming where (a `+` that overrode silently would hide a typo'd
// intent); `++key=value` sets it either way. Unknown keys get the usual hint.
TEST(ConfigGroups, PlusAddsAKeyTheConfigDoesNotSet) {
  const std::string mlp = source("configs/fashion_mnist_mlp.yaml");
  Config c = load_config(mlp, {"+train.grad_clip_norm=1.5"});
  EXPECT_TRUE(c.is_set("train.grad_clip_norm"));
  EXPECT_DOUBLE_EQ(c.get_float("train.grad_clip_norm"), 1.5);
  expect_error([&] { load_config(mlp, {"+data.val_fraction=0.3"}); },
               {"'+data.val_fraction=0.3'", "sets 'data.val_fraction' already", "fashion_mnist.yaml",
                "'++data.val_fraction=...'"});
  EXPECT_DOUBLE_EQ(load_config(mlp, {"++data.val_fraction=0.3"}).get_float("data.val_fraction"), 0.3);
  EXPECT_DOUBLE_EQ(load_config(mlp, {"++train.grad_clip_norm=2"}).get_float("train.grad_clip_norm"), 2.0);
  expect_error([&] { load_config(mlp, {"+model.hiden=3"}); }, {"unknown config key 'model.hiden'", "model.hidden"});
  expect_error([&] { load_config(mlp, {"+train.grad_clip_norm"}); }, {"must be +key=value"});
}

// Config: schema, YAML files, overrides, type checks and error messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/train/config.h"
#include "ember/train/zoo.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;

namespace {

Schema small_schema() {
  return Schema{{"optim.lr", ValueType::Float, 1e-3, "learning rate"},
                {"optim.name", ValueType::String, std::string("adam"), "optimizer", {"sgd", "adam", "adamw"}},
                {"data.batch_size", ValueType::Int, int64_t{128}, "batch"},
                {"data.augment", ValueType::StringList, std::vector<std::string>{}, "augment", {"hflip", "crop"}},
                {"optim.betas", ValueType::FloatList, std::vector<double>{0.9, 0.999}, "betas"},
                {"model.hidden", ValueType::IntList, std::vector<int64_t>{256, 256}, "hidden"},
                {"train.deterministic", ValueType::Bool, true, "det"}};
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST(Config, DefaultsAndTypedGetters) {
  Config c(small_schema());
  EXPECT_DOUBLE_EQ(c.get_float("optim.lr"), 1e-3);
  EXPECT_EQ(c.get_int("data.batch_size"), 128);
  EXPECT_EQ(c.get_string("optim.name"), "adam");
  EXPECT_EQ(c.get_int_list("model.hidden"), (std::vector<int64_t>{256, 256}));
  EXPECT_TRUE(c.get_bool("train.deterministic"));
  EXPECT_FALSE(c.is_set("optim.lr"));
  EXPECT_DOUBLE_EQ(c.get_float("data.batch_size"), 128.0);  // ints widen
}

TEST(Config, OverridesParseEachType) {
  Config c(small_schema());
  c.apply_override("optim.lr=3e-4");
  c.apply_override("data.batch_size=256");
  c.apply_override("optim.name=sgd");
  c.apply_override("model.hidden=[64, 32, 16]");
  c.apply_override("optim.betas=0.8,0.99");
  c.apply_override("train.deterministic=false");
  c.apply_override("data.augment=[hflip, crop]");
  EXPECT_DOUBLE_EQ(c.get_float("optim.lr"), 3e-4);
  EXPECT_EQ(c.get_int("data.batch_size"), 256);
  EXPECT_EQ(c.get_string("optim.name"), "sgd");
  EXPECT_EQ(c.get_int_list("model.hidden"), (std::vector<int64_t>{64, 32, 16}));
  EXPECT_EQ(c.get_float_list("optim.betas"), (std::vector<double>{0.8, 0.99}));
  EXPECT_FALSE(c.get_bool("train.deterministic"));
  EXPECT_EQ(c.get_string_list("data.augment"), (std::vector<std::string>{"hflip", "crop"}));
  EXPECT_TRUE(c.is_set("optim.lr"));
  c.apply_override("model.hidden=[]");
  EXPECT_TRUE(c.get_int_list("model.hidden").empty());
}

TEST(Config, UnknownKeySuggestsClosest) {
  Config c(small_schema());
  expect_error([&] { c.apply_override("optim.lrr=0.1"); }, {"unknown config key 'optim.lrr'", "did you mean 'optim.lr'"});
  expect_error([&] { c.apply_override("data.batchsize=3"); }, {"did you mean 'data.batch_size'"});
  // A bare option name finds its section.
  expect_error([&] { c.apply_override("lr=0.1"); }, {"unknown config key 'lr'", "did you mean 'optim.lr'"});
  EXPECT_THROW(c.apply_override("optim.lrr=0.1"), ConfigError);
}

TEST(Config, TypeErrorsNameKeyTypeAndText) {
  Config c(small_schema());
  expect_error([&] { c.apply_override("data.batch_size=12.5"); }, {"data.batch_size", "expects an int", "'12.5'"});
  expect_error([&] { c.apply_override("optim.lr=fast"); }, {"optim.lr", "expects a float", "'fast'"});
  expect_error([&] { c.apply_override("train.deterministic=maybe"); }, {"expects a bool"});
  expect_error([&] { c.apply_override("model.hidden=[1, x]"); }, {"model.hidden", "list of ints", "'x'"});
  expect_error([&] { c.apply_override("optim.name=adm"); }, {"'adm' is not one of sgd, adam, adamw",
                                                             "did you mean 'adam'"});
  expect_error([&] { c.apply_override("data.augment=[flip]"); }, {"'flip' is not one of hflip, crop"});
  expect_error([&] { c.apply_override("optim.lr"); }, {"must be key=value"});
}

TEST(Config, YamlRoundTripIsExact) {
  Config c(small_schema());
  c.apply_override("optim.lr=0.1");
  c.apply_override("optim.betas=[0.3, 1e-300]");
  c.apply_override("data.augment=[hflip]");
  std::string yaml = c.to_yaml(true);
  EXPECT_NE(yaml.find("optim:"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# learning rate"), std::string::npos) << yaml;
  Config back(small_schema());
  for (const YamlEntry& e : flatten_yaml(yaml, "roundtrip")) back.set_text(e.key, e.text);
  const Schema schema = small_schema();
  for (const OptionSpec& o : schema.options())
    EXPECT_EQ(value_to_text(back.value(o.key)), value_to_text(c.value(o.key))) << o.key;
  EXPECT_EQ(back.to_yaml(true), yaml);
}

TEST(Config, FlattenYamlReportsPositions) {
  auto entries = flatten_yaml("optim:\n  lr: 0.5\n  betas: [0.1, 0.2]\ndata:\n  batch_size: 7\n", "x.yaml");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].key, "optim.lr");
  EXPECT_EQ(entries[0].text, "0.5");
  EXPECT_EQ(entries[0].position, "2:3");
  EXPECT_EQ(entries[1].text, "[0.1, 0.2]");
  EXPECT_TRUE(entries[1].is_list);
  EXPECT_EQ(entries[2].key, "data.batch_size");
  EXPECT_EQ(entries[2].position, "5:3");
}

TEST(Config, MalformedYamlNamesFileLineAndColumn) {
  expect_error([] { flatten_yaml("optim:\n  lr: [0.1, 0.2\ndata: 3\n", "bad.yaml"); },
               {"bad.yaml:", "malformed YAML"});
  try {
    flatten_yaml("a: 1\nb: : :\n  - c\n", "bad2.yaml");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad2.yaml:2:"), std::string::npos) << e.what();
  }
  expect_error([] { flatten_yaml("- 1\n- 2\n", "list.yaml"); }, {"list.yaml:1:1", "must be a mapping"});
}

TEST(Config, LoadConfigWithModelOptionsAndOverrides) {
  std::string path = write_temp("ember_cfg_ok.yaml",
                                "model:\n  name: mlp\n  hidden: [32]\noptim:\n  lr: 0.25\ndata:\n  batch_size: 16\n");
  Config c = load_config(path, {"optim.lr=0.5", "model.dropout=0.2"});
  EXPECT_EQ(c.get_string("model.name"), "mlp");
  EXPECT_EQ(c.get_int_list("model.hidden"), (std::vector<int64_t>{32}));
  EXPECT_DOUBLE_EQ(c.get_float("optim.lr"), 0.5);  // the override wins
  EXPECT_DOUBLE_EQ(c.get_float("model.dropout"), 0.2);
  EXPECT_EQ(c.get_int("data.batch_size"), 16);
  EXPECT_EQ(c.get_int("train.epochs"), 10);  // a default
  // The resolved YAML reads back to the same config.
  Config back = config_from_yaml(c.to_yaml(true), "resolved");
  EXPECT_EQ(back.to_yaml(), c.to_yaml());
}

TEST(Config, LoadConfigErrors) {
  expect_error([] { load_config("/nonexistent/cfg.yaml", {}); }, {"cannot read config file '/nonexistent/cfg.yaml'"});
  std::string bad_type = write_temp("ember_cfg_type.yaml", "optim:\n  lr: fast\n");
  expect_error([&] { load_config(bad_type, {}); }, {"ember_cfg_type.yaml:2:3", "optim.lr", "expects a float"});
  std::string bad_key = write_temp("ember_cfg_key.yaml", "train:\n  epoch: 3\n");
  expect_error([&] { load_config(bad_key, {}); }, {"ember_cfg_key.yaml:2:3", "unknown config key 'train.epoch'",
                                                   "did you mean 'train.epochs'"});
  std::string bad_model = write_temp("ember_cfg_model.yaml", "model:\n  name: vgg\n");
  expect_error([&] { load_config(bad_model, {}); }, {"unknown model 'vgg'", "cnn", "mlp", "resnet"});
  // A model option of another model is unknown for this one.
  expect_error([&] { load_config("", {"model.name=mlp", "model.depth=18"}); }, {"unknown config key 'model.depth'"});
}

TEST(Config, EveryZooModelHasASchemaWithDefaults) {
  for (const std::string& name : model_names()) {
    Config c(experiment_schema(name));
    EXPECT_EQ(c.get_string("model.name"), "cnn");  // the schema default; load_config sets the chosen name
    EXPECT_FALSE(find_model(name).help.empty()) << name;
  }
  EXPECT_GE(model_names().size(), 5u);
}

// Hints for unknown keys: a key of a known section is matched within that
// section, and Hydra's `+key=value` names the key without the '+'.
#include <gtest/gtest.h>

#include "ember/train/config.h"
#include "ember/train/zoo.h"
#include "test_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;

namespace {

// The message of the ConfigError that `override` raises ("" when none).
std::string error_of(Config& c, const std::string& override) {
  try {
    c.apply_override(override);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ConfigHints, AModelKeyIsSuggestedFromTheModelSection) {
  Config c(experiment_schema("mlp"));
  // Nothing in model.* is near "foo": no hint from another section (the
  // nearest key of the whole schema was log.root), the model's keys listed.
  std::string foo = error_of(c, "model.foo=1");
  EXPECT_NE(foo.find("unknown config key 'model.foo'"), std::string::npos) << foo;
  EXPECT_EQ(foo.find("log.root"), std::string::npos) << foo;
  EXPECT_NE(foo.find("valid keys: model.name"), std::string::npos) << foo;
  EXPECT_NE(foo.find("model.hidden"), std::string::npos) << foo;
  std::string typo = error_of(c, "model.hiden=[16]");
  EXPECT_NE(typo.find("did you mean 'model.hidden'?"), std::string::npos) << typo;
}

TEST(ConfigHints, PlusKeysNameTheKeyWithoutThePlus) {
  Config c(experiment_schema("mlp"));
  std::string foo = error_of(c, "+model.foo=1");
  EXPECT_NE(foo.find("unknown config key '+model.foo'"), std::string::npos) << foo;
  EXPECT_NE(foo.find("valid keys: model.name"), std::string::npos) << foo;
  EXPECT_EQ(foo.find("log.root"), std::string::npos) << foo;
  std::string typo = error_of(c, "+model.widht=3");
  EXPECT_NE(typo.find("valid keys: model.name"), std::string::npos) << typo;
  std::string near = error_of(c, "+optim.lrr=0.1");
  EXPECT_NE(near.find("did you mean 'optim.lr'?"), std::string::npos) << near;
  // An existing key: say to drop the '+'.
  std::string exists = error_of(c, "+model.hidden=[16]");
  EXPECT_NE(exists.find("'+model.hidden': the key exists already"), std::string::npos) << exists;
  EXPECT_NE(exists.find("write 'model.hidden=...'"), std::string::npos) << exists;
  // Unchanged: hints across sections by the last segment.
  std::string bare = error_of(c, "lr=0.1");
  EXPECT_NE(bare.find("did you mean 'optim.lr'?"), std::string::npos) << bare;
  expect_error([&] { c.apply_override("train.epoch=3"); }, {"did you mean 'train.epochs'"});
}

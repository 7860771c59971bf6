// The YAML experiment config from text (what `ember train CONFIG.yaml` reads
// and what `ember eval` reads back from a checkpoint): parse, check against
// the schema, and a config that loads must load again from its own to_yaml().
// The same bytes also go to data.split_file's parser (JSON row lists).
#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/split_file.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_error([&] {
    train::Config cfg = train::config_from_yaml(text, "fuzz.yaml");
    std::string again = cfg.to_yaml();
    try {
      train::Config back = train::config_from_yaml(again, "to_yaml");
      fuzz::require(back.to_yaml() == again, "to_yaml is stable across a round trip");
    } catch (const Error& e) {
      std::fprintf(stderr, "fuzz: a loaded config does not load from its own to_yaml():\n%s\n--- to_yaml:\n%s\n",
                   e.what(), again.c_str());
      std::abort();
    }
  });
  fuzz::expect_clean_error([&] {
    train::SplitIndices split = train::parse_split(text, 64, "fuzz.json");
    fuzz::require(!split.train.empty() && split.train.size() + split.val.size() <= 64, "a split within the rows");
  });
  return 0;
}

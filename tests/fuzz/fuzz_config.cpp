// The YAML experiment config from text (what `ember train CONFIG.yaml` reads
// and what `ember eval` reads back from a checkpoint): parse, check against
// the schema, and a config that loads must load again from its own to_yaml().
#include "ember/ember.h"
#include "ember/train/config.h"
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
  return 0;
}

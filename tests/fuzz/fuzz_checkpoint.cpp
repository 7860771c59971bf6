// load_checkpoint on an untrusted file: the safetensors container plus
// Ember's metadata (epoch/step counts, scheduler/optimizer/trainer JSON, the
// optimizer's param-group layout).
#include "ember/ember.h"
#include "ember/train/checkpoint.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".ckpt");
  const std::string& path = file.write(data, size);
  fuzz::expect_clean_error([&] {
    train::Checkpoint c = train::load_checkpoint(path);
    for (const auto& [name, t] : c.model) (void)t.clone();
    for (const auto& [name, t] : c.optimizer.tensors()) (void)t.clone();
    if (c.rng_state.defined()) (void)c.rng_state.clone();
  });
  return 0;
}

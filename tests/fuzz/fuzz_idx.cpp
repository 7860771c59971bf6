// read_idx on an untrusted file (raw or gzip): the tensor must own what its
// header claims (clone reads all of it).
#include "ember/data/datasets/idx.h"
#include "ember/ember.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".idx");
  const std::string& path = file.write(data, size);
  fuzz::expect_clean_error([&] {
    Tensor t = data::read_idx(path);
    Tensor c = t.clone();
    fuzz::require(c.numel() == t.numel(), "clone keeps numel");
  });
  return 0;
}

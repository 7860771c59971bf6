// safetensors::load on untrusted bytes: every tensor it returns must own the
// memory its shape claims (clone reads all of it), and what loads must save
// and load back to the same bytes.
#include <cstring>

#include "ember/ember.h"
#include "ember/io/safetensors.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_error([&] {
    safetensors::Metadata meta;
    StateDict sd = safetensors::load(bytes, &meta, "fuzz.safetensors");
    for (const auto& [name, t] : sd) {
      Tensor c = t.clone();  // touches every byte the shape claims
      fuzz::require(c.nbytes() == t.nbytes(), "clone keeps the size");
    }
    StateDict back = safetensors::load(safetensors::save(sd, meta), nullptr, "round trip");
    fuzz::require(back.size() == sd.size(), "round trip keeps every tensor");
    for (const auto& [name, t] : sd) {
      const Tensor& u = back.at(name);
      Tensor a = t.contiguous(), b = u.contiguous();
      fuzz::require(a.dtype() == b.dtype() && a.sizes().vec() == b.sizes().vec() &&
                        std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0,
                    "round trip keeps dtype, shape and bytes");
    }
  });
  return 0;
}

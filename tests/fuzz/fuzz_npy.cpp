// io::npy_from_bytes / npz_from_bytes on untrusted bytes (the first byte picks
// which): what loads must own the memory its shape claims and must save and
// load back to the same bytes.
#include <cstring>

#include "ember/ember.h"
#include "ember/io/npy.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool npz = data[0] & 1;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  fuzz::expect_clean_error([&] {
    if (!npz) {
      Tensor t = io::npy_from_bytes(bytes, "fuzz.npy");
      Tensor c = t.clone();
      Tensor back = io::npy_from_bytes(io::npy_to_bytes(t), "round trip");
      fuzz::require(back.dtype() == t.dtype() && back.sizes().vec() == t.sizes().vec() &&
                        std::memcmp(back.data_ptr(), c.data_ptr(), c.nbytes()) == 0,
                    "npy round trip keeps dtype, shape and bytes");
      return;
    }
    StateDict sd = io::npz_from_bytes(bytes, "fuzz.npz");
    StateDict back = io::npz_from_bytes(io::npz_to_bytes(sd, true), "round trip");
    fuzz::require(back.size() == sd.size(), "npz round trip keeps every array");
    for (const auto& [name, t] : sd) {
      const Tensor& u = back.at(name);
      fuzz::require(u.dtype() == t.dtype() && u.sizes().vec() == t.sizes().vec() &&
                        std::memcmp(u.data_ptr(), t.contiguous().data_ptr(), t.nbytes()) == 0,
                    "npz round trip keeps dtype, shape and bytes");
    }
  });
  return 0;
}

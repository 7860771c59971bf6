// io::load_pytorch_bytes on untrusted bytes: nothing but an ember::Error may
// come out, and every tensor returned must stay inside its storage.
#include "ember/ember.h"
#include "ember/io/pytorch.h"
#include "fuzz_util.h"

using namespace ember;

namespace {
void touch(const io::PyValue& v) {
  switch (v.kind()) {
    case io::PyValue::Kind::Tensor: (void)v.to_tensor().clone(); break;  // reads every element
    case io::PyValue::Kind::List: case io::PyValue::Kind::Tuple:
      for (const io::PyValue& x : v.items()) touch(x);
      break;
    case io::PyValue::Kind::Dict:
      for (const io::PyValue& x : v.values()) touch(x);
      break;
    default: break;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_error([&] {
    io::PyValue v = io::load_pytorch_bytes(bytes, "fuzz.pt");
    touch(v);
    if (v.is_dict()) (void)io::pytorch_state_dict(v, "module.");
  });
  return 0;
}

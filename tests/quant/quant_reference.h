// Access to tests/data/quant_reference.safetensors (PyTorch 1.13 values
// written by tests/data/gen_quant.py).
#pragma once

#include <string>

#include "ember/io/safetensors.h"
#include "test_util.h"

namespace ember::testing {

struct QuantReference {
  StateDict tensors;
  safetensors::Metadata meta;
};

inline const QuantReference& quant_ref() {
  static const QuantReference r = [] {
    QuantReference out;
    out.tensors =
        safetensors::load_file(std::string(EMBER_TEST_DATA_DIR) + "/quant_reference.safetensors", &out.meta);
    return out;
  }();
  return r;
}

inline Tensor qref(const std::string& key) { return quant_ref().tensors.at(key); }
inline const std::string& qmeta(const std::string& key) { return quant_ref().meta.at(key); }

}  // namespace ember::testing

// Access to tests/data/nn_reference.safetensors (PyTorch 1.13 values written
// by tests/data/gen_nn.py) and comparison helpers for nn tests.
#pragma once

#include <string>

#include "ember/core/grad_mode.h"
#include "ember/io/safetensors.h"
#include "ember/nn.h"
#include "test_util.h"

namespace ember::testing {

struct NnReference {
  StateDict tensors;
  safetensors::Metadata meta;
};

inline const NnReference& nn_ref() {
  static const NnReference r = [] {
    NnReference out;
    out.tensors = safetensors::load_file(std::string(EMBER_TEST_DATA_DIR) + "/nn_reference.safetensors", &out.meta);
    return out;
  }();
  return r;
}

inline Tensor golden(const std::string& key) { return nn_ref().tensors.at(key); }
inline bool has_ref(const std::string& key) { return nn_ref().tensors.contains(key); }
inline const std::string& ref_meta(const std::string& key) { return nn_ref().meta.at(key); }

// Values and shape equal within rtol (relative) + atol.
inline void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double rtol = 1e-10,
                         double atol = 1e-12) {
  ASSERT_TRUE(got.defined()) << what << ": undefined";
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what << ": shape";
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], atol + rtol * std::fabs(w[i])) << what << " at flat index " << i;
}

// Loads "<name>.p.*" and "<name>.b.*" into m through load_state_dict(strict).
inline void load_ref_state(nn::Module& m, const std::string& name) {
  StateDict d;
  for (const auto& [k, v] : nn_ref().tensors) {
    for (const std::string& p : {name + ".p.", name + ".b."})
      if (k.rfind(p, 0) == 0) d.insert(k.substr(p.size()), v);
  }
  m.load_state_dict(d, true);
}

}  // namespace ember::testing

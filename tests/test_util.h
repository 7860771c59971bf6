// Helpers for tests: compare a tensor with expected values.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"
#include "ember/nn.h"

namespace ember::testing {

// Asserts t has the given shape and values (row-major), within tolerance.
inline void expect_values(const Tensor& t, IntArrayRef shape, const std::vector<double>& expected,
                          double rtol = 1e-6, double atol = 1e-6) {
  ASSERT_EQ(t.sizes().vec(), shape.vec()) << "shape mismatch";
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": got " << got[i] << ", expected nan";
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], atol + rtol * std::fabs(expected[i])) << "at index " << i;
    }
  }
}

// Runs f and checks it throws ember::Error whose message contains every needle.
template <typename F>
void expect_error(F&& f, std::initializer_list<const char*> needles) {
  try {
    f();
    ADD_FAILURE() << "expected an ember::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "message: " << msg << "\nmissing: " << n;
  }
}

// A module's state-dict keys joined with commas, in registration order.
inline std::string keys_of(const nn::Module& m) {
  std::string out;
  for (const auto& [k, v] : m.state_dict()) out += (out.empty() ? "" : ",") + k;
  return out;
}

// The number of parameter elements (PyTorch's sum(p.numel() for p in m.parameters())).
inline int64_t numel_of(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace ember::testing

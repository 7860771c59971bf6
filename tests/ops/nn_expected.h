// PyTorch values for the conv and pool tests (tests/data/gen_conv.py ->
// conv_expected.txt), and the generator's input formula X(shape, k).
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace ember::testing {

struct NnExpected {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

inline const std::map<std::string, NnExpected>& nn_expected() {
  static const std::map<std::string, NnExpected> table = [] {
    std::map<std::string, NnExpected> t;
    std::ifstream f(std::string(EMBER_TEST_DATA_DIR) + "/conv_expected.txt");
    std::string line;
    while (std::getline(f, line)) {
      std::stringstream ss(line);
      std::string name, shape, values, item;
      if (!std::getline(ss, name, '|') || !std::getline(ss, shape, '|') || !std::getline(ss, values)) continue;
      NnExpected e;
      std::stringstream sh(shape), vs(values);
      while (std::getline(sh, item, ',')) e.shape.push_back(std::stoll(item));
      while (std::getline(vs, item, ',')) e.values.push_back(std::stod(item));
      t[name] = e;
    }
    return t;
  }();
  return table;
}

// The generator's inputs: exact quarter-integers in [-1.5, 1.5].
inline Tensor X(IntArrayRef shape, int k, ScalarType dtype = kFloat64) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + 3 * k) % 13 - 6) / 4;
  return tensor<double>(v).view(shape).to(dtype);
}

inline void expect_torch(const std::string& name, const Tensor& t, double tol = 1e-9) {
  SCOPED_TRACE(name);
  auto it = nn_expected().find(name);
  ASSERT_NE(it, nn_expected().end()) << "no expected values named " << name;
  expect_values(t, it->second.shape, it->second.values, tol, tol);
}

// Runs f on inputs X(shapes[i], i) (requiring grad), backpropagates
// X(out.shape, 5), and compares the output and every gradient with PyTorch.
template <typename F>
void check_with_grads(const std::string& name, const std::vector<std::vector<int64_t>>& shapes, F&& f,
                      ScalarType dtype = kFloat64) {
  SCOPED_TRACE(to_string(dtype));
  const double tol = dtype == kFloat64 ? 1e-9 : 1e-4;
  std::vector<Tensor> in;
  for (size_t i = 0; i < shapes.size(); ++i) in.push_back(X(shapes[i], static_cast<int>(i), dtype).requires_grad_());
  Tensor out = f(in);
  expect_torch(name, out, tol);
  out.backward(X(out.sizes(), 5, dtype));
  for (size_t i = 0; i < in.size(); ++i) expect_torch(name + ".grad" + std::to_string(i), in[i].grad(), tol);
}

}  // namespace ember::testing

// Loads tests/data/optim_golden.txt (PyTorch 1.13 numbers written by
// tests/data/gen_optim.py) and builds the problem the generator optimizes.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace ember::testing {

struct OptimGolden {
  // opt[case][step - 1]: W then b after that step.
  std::map<std::string, std::vector<std::vector<double>>> opt;
  // sched_lr[case][step], sched_momentum[case][step] (empty when not cycled).
  std::map<std::string, std::vector<std::vector<double>>> sched_lr, sched_momentum;
  // clip[case] = (total norm, clipped grads).
  std::map<std::string, std::pair<double, std::vector<double>>> clip;
};

inline std::vector<double> golden_values(const std::string& s) {
  std::vector<double> v;
  if (s == "-") return v;
  std::istringstream is(s);
  std::string tok;
  while (is >> tok) v.push_back(std::stod(tok));
  return v;
}

inline const OptimGolden& optim_golden() {
  static const OptimGolden golden = [] {
    OptimGolden g;
    std::ifstream in(std::string(EMBER_TEST_DATA_DIR) + "/optim_golden.txt");
    EXPECT_TRUE(in.good()) << "missing tests/data/optim_golden.txt";
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> f;
      std::string cur;
      for (char c : line) {
        if (c == '|') {
          f.push_back(cur);
          cur.clear();
        } else {
          cur += c;
        }
      }
      f.push_back(cur);
      if (f[0] == "opt") {
        g.opt[f[1]].push_back(golden_values(f[3]));
      } else if (f[0] == "sched") {
        g.sched_lr[f[1]].push_back(golden_values(f[3]));
        g.sched_momentum[f[1]].push_back(golden_values(f[4]));
      } else if (f[0] == "clip") {
        g.clip[f[1]] = {std::stod(f[2]), golden_values(f[3])};
      }
    }
    return g;
  }();
  return golden;
}

// The generator's parameters W [3, 4] and b [3] (dtype float64 unless told),
// optionally laid out transposed in memory so updates take the non-fused path.
struct Problem {
  Tensor W, b;
  explicit Problem(ScalarType dtype = kFloat64, bool strided = false) {
    Tensor w = cos(arange(12).to(kFloat64) * 0.5) * 0.5;
    if (strided) {
      W = zeros({4, 3}, dtype).t();
      W.copy_(w.view({3, 4}));
    } else {
      W = w.view({3, 4}).to(dtype).contiguous();
    }
    W.requires_grad_();
    b = (arange(3).to(kFloat64) * 0.1 - 0.1).to(dtype).requires_grad_();
  }
  Tensor loss() const {
    Tensor x = sin(arange(20).to(kFloat64) * 0.7).view({5, 4}).to(W.dtype());
    Tensor y = cos(arange(15).to(kFloat64) * 0.3).view({5, 3}).to(W.dtype());
    return pow(tanh(matmul(x, W.t()) + b) - y, 2).sum();
  }
  std::vector<double> values() const {
    std::vector<double> v = W.to_vector<double>();
    std::vector<double> bv = b.to_vector<double>();
    v.insert(v.end(), bv.begin(), bv.end());
    return v;
  }
};

}  // namespace ember::testing

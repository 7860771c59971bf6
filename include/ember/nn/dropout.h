// Dropout, Dropout1d/2d/3d, AlphaDropout: random zeroing in training,
// identity in eval.
#pragma once

#include "ember/core/generator.h"
#include "ember/nn/module.h"

namespace ember::nn {

// Zeroes elements with probability p, scales survivors by 1 / (1 - p).
// gen: where masks are drawn from (the default generator when null).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
  Generator* generator;
};

// Zeroes whole channels of (N, C, H, W) (or (N, C, L)) input.
class Dropout2d : public Module {
 public:
  explicit Dropout2d(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
  Generator* generator;
};

// Zeroes whole channels of (N, C, L) or (C, L) input.
class Dropout1d : public Module {
 public:
  explicit Dropout1d(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
  Generator* generator;
};

// Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input.
class Dropout3d : public Module {
 public:
  explicit Dropout3d(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
  Generator* generator;
};

// F.alpha_dropout in training (keeps SELU's self-normalisation).
class AlphaDropout : public Module {
 public:
  explicit AlphaDropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
  Generator* generator;
};

}  // namespace ember::nn

// Random kernels other ops build on, with the generator bookkeeping of
// random.cpp (Note [random determinism]).
#pragma once

#include <utility>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember::detail {

// Dropout's keep decision for every counter-based draw: bernoulli_(1 - p)
// keeps element i when uniform01 < 1 - p, uniform01 being (w01 >> 11) /
// 2^53, so when w01 >> 11 < keep_below; kept elements are scaled by `scale`
// (div_'s float division of a float 1 by 1 - p).
struct DropoutKeep {
  uint64_t keep_below;
  float scale;
};
DropoutKeep dropout_keep(double p);

// Dropout of a contiguous float32 x in one pass: returns (y, noise), noise
// being 1 / (1 - p) where kept and 0 elsewhere, y = x * noise. The numbers
// equal bernoulli_(1 - p) then div_(1 - p) then x * noise; records nothing.
std::pair<Tensor, Tensor> dropout_f32(const Tensor& x, double p, Generator* gen);

}  // namespace ember::detail

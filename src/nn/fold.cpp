// Fold and Unfold over F.fold / F.unfold.
#include "ember/nn/fold.h"

#include "ember/ops/nn_functional.h"

namespace ember::nn {

Unfold::Unfold(ExpandingArray<2> k, ExpandingArray<2> d, ExpandingArray<2> p, ExpandingArray<2> s)
    : Module("Unfold"), kernel_size(k), dilation(d), padding(p), stride(s) {}

Tensor Unfold::forward(const Tensor& input) {
  return unfold(input, kernel_size.ref(), dilation.ref(), padding.ref(), stride.ref());
}

std::string Unfold::extra_repr() const {
  return fmt::format("kernel_size={}, dilation={}, padding={}, stride={}", kernel_size.py(), dilation.py(),
                     padding.py(), stride.py());
}

Fold::Fold(ExpandingArray<2> o, ExpandingArray<2> k, ExpandingArray<2> d, ExpandingArray<2> p, ExpandingArray<2> s)
    : Module("Fold"), output_size(o), kernel_size(k), dilation(d), padding(p), stride(s) {}

Tensor Fold::forward(const Tensor& input) {
  return fold(input, output_size.ref(), kernel_size.ref(), dilation.ref(), padding.ref(), stride.ref());
}

std::string Fold::extra_repr() const {
  return fmt::format("output_size={}, kernel_size={}, dilation={}, padding={}, stride={}", output_size.py(),
                     kernel_size.py(), dilation.py(), padding.py(), stride.py());
}

}  // namespace ember::nn

// The padding layers over F.pad (ember/ops/indexing.h), which checks the
// input against the mode.
#include "ember/nn/padding.h"

#include "ember/ops/indexing.h"

namespace ember::nn {
namespace {

// One value for every side, or exactly two per padded dim (PyTorch's _ntuple).
std::vector<int64_t> expand_padding(const std::string& type_name, int64_t dims, std::vector<int64_t> padding) {
  const size_t n = static_cast<size_t>(2 * dims);
  if (padding.size() == 1) return std::vector<int64_t>(n, padding[0]);
  EMBER_CHECK(padding.size() == n, "{}: expected padding to be an int or {} ints, got {}", type_name, n,
              py_tuple(padding));
  return padding;
}

}  // namespace

PadNd::PadNd(std::string type_name, int64_t dims, std::vector<int64_t> p, std::string m, std::optional<double> v)
    : Module(type_name), padding(expand_padding(type_name, dims, std::move(p))), mode(std::move(m)), value(v) {}

Tensor PadNd::forward(const Tensor& input) { return pad(input, padding, mode, value.value_or(0.0)); }

// PyTorch prints the padding tuple alone, and ConstantPadNd adds the value.
std::string PadNd::extra_repr() const {
  if (value) return fmt::format("padding={}, value={}", py_tuple(padding), py_float(*value));
  return py_tuple(padding);
}

}  // namespace ember::nn

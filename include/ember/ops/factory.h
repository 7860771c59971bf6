// Tensor factories (torch.zeros, torch.arange, torch.randn, ...).
#pragma once

#include <vector>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

Tensor empty(IntArrayRef sizes, TensorOptions opts = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts = {});
Tensor zeros(IntArrayRef sizes, TensorOptions opts = {});
Tensor ones(IntArrayRef sizes, TensorOptions opts = {});
// dtype defaults to the scalar's own (float32 for a double, int64 for an int).
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts = {});
Tensor empty_like(const Tensor& t, TensorOptions opts = {});
Tensor zeros_like(const Tensor& t, TensorOptions opts = {});
Tensor ones_like(const Tensor& t, TensorOptions opts = {});
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions opts = {});
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);

// [0, end), [start, end) with step; int64 when all arguments are integers.
Tensor arange(const Scalar& end, TensorOptions opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions opts = {});
Tensor linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions opts = {});

// A 0-dim tensor holding value (dtype defaults to the scalar's own).
Tensor scalar_tensor(const Scalar& value, TensorOptions opts = {});
// Copies data into a new tensor of the given sizes (1-D when sizes is empty).
template <typename T>
Tensor tensor(const std::vector<T>& data, IntArrayRef sizes = {}, TensorOptions opts = {});
template <typename T>
Tensor tensor(std::initializer_list<T> data, IntArrayRef sizes = {}, TensorOptions opts = {}) {
  return tensor(std::vector<T>(data), sizes, opts);
}
// Wraps external memory without copying; deleter (optional) runs when the
// last view dies. strides default to row-major.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions opts = {},
                 std::function<void(void*)> deleter = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions opts = {},
                 std::function<void(void*)> deleter = {});

// Random (from `gen`, or the default generator).
Tensor rand(IntArrayRef sizes, TensorOptions opts = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef sizes, TensorOptions opts = {}, Generator* gen = nullptr);
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions opts = {},
               Generator* gen = nullptr);
Tensor randperm(int64_t n, TensorOptions opts = {}, Generator* gen = nullptr);
// Draws 0/1 with probability p (elementwise from a probability tensor).
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& like, double p, Generator* gen = nullptr);

}  // namespace ember

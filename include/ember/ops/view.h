// View and copy ops: views share storage with their base (Note [views]).
#pragma once

#include "ember/core/tensor.h"

namespace ember {

// Wraps a dim index into [0, ndim) or raises IndexError naming the op.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

Tensor view(const Tensor& t, IntArrayRef sizes);
Tensor reshape(const Tensor& t, IntArrayRef sizes);
Tensor contiguous(const Tensor& t);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step = 1);
Tensor expand(const Tensor& t, IntArrayRef sizes);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor broadcast_to(const Tensor& t, IntArrayRef sizes);
// The adjoint of as_strided on a contiguous input (used by its derivative).
Tensor as_strided_backward(const Tensor& g, IntArrayRef in_sizes, IntArrayRef in_strides, int64_t in_offset,
                           IntArrayRef sizes, IntArrayRef strides, int64_t offset);
std::vector<Tensor> broadcast_tensors(TensorList tensors);

// A new tensor with its own storage holding a copy of t (same dtype).
Tensor clone(const Tensor& t);
// Copies src (broadcast, converted) into dst; returns dst.
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);

}  // namespace ember

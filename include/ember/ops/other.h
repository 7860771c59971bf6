// PyTorch's "Other operations": counting and binning, combinatorics,
// diagonals, differences, tensor contractions (einsum, tensordot, kron),
// distances. Composites of the primitive ops (src/ops/other.cpp,
// src/ops/einsum.cpp).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// Counts of each value of a non-negative int 1-D tensor (weighted: sums of
// weights, in the weights' floating dtype); length max(max + 1, minlength).
Tensor bincount(const Tensor& t, const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0);
// For each value, the index of its bucket in the sorted 1-D boundaries:
// right = false gives boundaries[i-1] < x <= boundaries[i].
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);
// Insertion points of values into the innermost dim of sorted_sequence
// (1-D, or with the same leading dims as values). side "left" or "right"
// says the same as right (they may not contradict each other); sorter, an
// int64 tensor of sorted_sequence's shape, holds the indices that sort an
// unsorted sequence along its innermost dim (argsort's), and the results
// are positions in that sorted order.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
// One value: a 0-dim result.
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
// Histogram with `bins` equal bins over [min, max] (the data's range when
// both are 0); values outside are ignored.
Tensor histc(const Tensor& t, int64_t bins = 100, double min = 0, double max = 0);

// [N, k] rows of every combination of the k 1-D inputs' elements.
Tensor cartesian_prod(TensorList tensors);
// Length-r combinations of a 1-D tensor's elements (itertools order).
Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);
// indexing: "ij" (PyTorch's default) or "xy".
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing = "ij");
// [2, N] int64 (row, col) coordinates of the lower / upper triangle.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = kInt64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = kInt64);

// 3-vector cross product along dim (the first dim of size 3 when empty).
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);
// 1-D -> square matrix with it on the given diagonal; 2-D -> that diagonal.
Tensor diag(const Tensor& t, int64_t diagonal = 0);
// The last dim placed on the (dim1, dim2) diagonal of new square dims.
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// n-th forward difference along dim, after concatenating prepend / append.
Tensor diff(const Tensor& t, int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = std::nullopt,
            const std::optional<Tensor>& append = std::nullopt);
Tensor trace(const Tensor& t);  // sum of a matrix's main diagonal

// Einstein summation: "ij,jk->ik", implicit output ("ij,jk"), "..." broadcast
// dims, repeated subscripts in one operand (diagonals).
Tensor einsum(std::string_view equation, TensorList operands);
// Contracts a's last `dims` dims with b's first `dims`, or the listed pairs.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor kron(const Tensor& a, const Tensor& b);
// cdist: ember/ops/distance.h.

}  // namespace ember

// Joining, splitting, gathering and sorting.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_select(const Tensor& t, const Tensor& mask);
// [n, ndim] int64 indices of the non-zero elements, row-major order.
Tensor nonzero(const Tensor& t);
// (values, indices); largest first when largest, stable order for ties.
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true,
                               bool sorted = true);
std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false,
                               bool stable = false);
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false);
// int64 class indices -> int64 one-hot; num_classes = -1 infers max + 1.
Tensor one_hot(const Tensor& t, int64_t num_classes = -1);
// pad = (left, right) for the last dim, then (top, bottom) for the one before...
// mode: "constant", "reflect", "replicate", "circular".
Tensor pad(const Tensor& t, IntArrayRef pad, std::string_view mode = "constant", double value = 0);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor flip(const Tensor& t, IntArrayRef dims);

// ---- more sorting, joining, splitting and indexing (issue 20) ----
// The k-th smallest (1-based) along dim and its index (src/ops/statistics.cpp).
std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);
Tensor msort(const Tensor& t);  // sort along dim 0, values only

// Joining and splitting (src/ops/joining.cpp).
Tensor hstack(TensorList tensors);
Tensor vstack(TensorList tensors);
Tensor dstack(TensorList tensors);
Tensor column_stack(TensorList tensors);
// `sections` near-equal pieces (the first size % sections one longer), or
// pieces cut before each of `indices` (a single index as
// std::vector<int64_t>{i}: a bare {i} selects the sections overload).
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& t, IntArrayRef indices, int64_t dim = 0);
std::vector<Tensor> hsplit(const Tensor& t, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& t, IntArrayRef indices);
std::vector<Tensor> vsplit(const Tensor& t, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& t, IntArrayRef indices);

// Rearranging (src/ops/rearrange.cpp).
Tensor fliplr(const Tensor& t);
Tensor flipud(const Tensor& t);
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination);
Tensor movedim(const Tensor& t, int64_t source, int64_t destination);
Tensor moveaxis(const Tensor& t, int64_t source, int64_t destination);
Tensor swapdims(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor swapaxes(const Tensor& t, int64_t dim0, int64_t dim1);
// Rolls the flattened tensor when dims is empty.
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims = {});
Tensor rot90(const Tensor& t, int64_t k = 1, IntArrayRef dims = {0, 1});
Tensor tile(const Tensor& t, IntArrayRef dims);
// Over the flattened input when dim is empty.
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt);
// [0]*repeats[0] ++ [1]*repeats[1] ++ ...
Tensor repeat_interleave(const Tensor& repeats);

// Index-driven ops (src/ops/index_ops.cpp). Indices are int64; negative
// values count from the end where PyTorch allows it (take, index_put).
Tensor take(const Tensor& t, const Tensor& index);  // into the flattened input
// gather with indices broadcast against t (over the flattened input when dim is empty).
Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Scalar& value);
// Advanced indexing (ATen's index / index_put, what t[i, j] and
// t[:, mask] = v become): int32/int64 index tensors broadcast together, a
// bool mask for as many dims as it has, an undefined Tensor() for a full
// slice; the result's shape follows PyTorch's rules (Note [advanced
// indexing] in src/ops/index_ops.cpp). Tensor::index({Slice(), idx}) and
// Tensor::index_put_({...}, v) mix them with basic indexing.
Tensor index(const Tensor& t, TensorList indices);
// t[indices] = values (+= with accumulate), values broadcast to t[indices]'s shape.
Tensor index_put(const Tensor& t, TensorList indices, const Tensor& values, bool accumulate = false);
// The masked positions, in row-major order, take source's leading elements.
Tensor masked_scatter(const Tensor& t, const Tensor& mask, const Tensor& source);
// reduce: "sum", "prod", "mean", "amax", "amin".
Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
// A copy of t with t.select(dim, index) (or t.slice(dim, start, end, step)) replaced by src.
Tensor select_scatter(const Tensor& t, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
// [n, ndim] int64 indices of the non-zero elements (nonzero's alias).
Tensor argwhere(const Tensor& t);

}  // namespace ember

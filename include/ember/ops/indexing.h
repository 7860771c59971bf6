// Joining, splitting, gathering and sorting.
#pragma once

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

}  // namespace ember

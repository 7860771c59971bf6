// Reductions over any set of dims, with keepdim, following torch semantics.
// An empty `dims` list means all dims.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// Integer and bool inputs sum to int64 unless dtype is given.
Tensor sum(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
// Floating inputs only (like PyTorch); raises for integers.
Tensor mean(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor prod(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
// Values only (torch.amax / amin), any set of dims.
Tensor amax(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
// (values, indices) along one dim; the index is the first occurrence.
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& t);  // over all elements, 0-dim
Tensor min(const Tensor& t);
// Over the flattened tensor when dim is empty.
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// correction = 1 is Bessel's (unbiased) estimate.
Tensor var(const Tensor& t, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
std::pair<Tensor, Tensor> var_mean(const Tensor& t, IntArrayRef dims = {}, double correction = 1,
                                   bool keepdim = false);
Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim = false);
// p-norm (p = inf gives max |x|, p = 0 counts non-zeros).
Tensor norm(const Tensor& t, double p = 2, IntArrayRef dims = {}, bool keepdim = false);
Tensor all(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor any(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// Composites built on the reductions.
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);

}  // namespace ember

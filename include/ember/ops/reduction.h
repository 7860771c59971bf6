// Reductions over any set of dims, with keepdim, following torch semantics.
// An empty `dims` list means all dims.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
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

// ---- more reductions (issue 20; composites in src/ops/statistics.cpp) ----
// (min, max) over all elements, or along dim.
std::pair<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// int64 count of non-zero elements over dims (all when empty).
Tensor count_nonzero(const Tensor& t, IntArrayRef dims = {});
// The p-norm of a - b (broadcast).
Tensor dist(const Tensor& a, const Tensor& b, double p = 2);
// The lower median (the smaller middle value for an even count); NaN
// propagates (median) or is ignored (nanmedian).
Tensor median(const Tensor& t);
std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& t);
std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim = false);
// The most frequent value along dim (the smallest on ties) and its last index.
std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);
// sum / mean treating NaN as absent.
Tensor nansum(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor nanmean(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
// q in [0, 1]: a scalar, or a 1-D tensor whose dim comes first in the result.
// Over the flattened input when dim is empty. interpolation: "linear",
// "lower", "higher", "midpoint", "nearest".
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
std::pair<Tensor, Tensor> std_mean(const Tensor& t, IntArrayRef dims = {}, double correction = 1,
                                   bool keepdim = false);
// (values, inverse_indices, counts), values sorted; over the flattened input,
// or unique slices along dim. All three are always returned (PyTorch's
// return_inverse / return_counts flags only drop some).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true,
                                          std::optional<int64_t> dim = std::nullopt);
// The same for runs of equal consecutive values (no sorting).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, std::optional<int64_t> dim = std::nullopt);

// Cumulative ops along dim (src/ops/scan.cpp).
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// (values, indices): the running max/min and the index where it was last reached.
std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
Tensor logcumsumexp(const Tensor& t, int64_t dim);

// Composites built on the reductions. dtype: t is cast to it first (so an
// integer tensor can be given), as PyTorch's dtype= argument does.
Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace ember

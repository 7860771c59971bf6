// sort and topk kernels: each slice along dim is copied out, ordered, and
// written back with its source positions.
#include <algorithm>
#include <utility>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/indexing.h"

namespace ember {
namespace {

template <typename M>
bool is_nan(M v) {
  if constexpr (std::is_floating_point_v<M>) return v != v;
  else return false;
}

// Orders like PyTorch: NaN is larger than every number (so it comes last when
// ascending and first when descending), and NaNs compare equal to each other.
template <typename M>
bool ordered_before(M a, M b, bool descending) {
  if (descending) return is_nan(a) ? !is_nan(b) : a > b;
  return is_nan(b) ? !is_nan(a) : a < b;
}

// Walks the slices of self along dim: f(slice, self_offset) where
// self_offset is the element offset of the slice's first element. Slices are
// numbered row-major over the other dims, which is also their order in a
// contiguous output of the same rank (out offset = (s / inner) * len * inner
// + s % inner).
struct SliceWalker {
  DimVector sizes, strides;  // self without dim
  int64_t inner = 1;

  SliceWalker(const Tensor& self, int64_t dim) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (d == dim) continue;
      sizes.push_back(self.sizes()[d]);
      strides.push_back(self.strides()[d]);
      if (d > dim) inner *= self.sizes()[d];
    }
  }
  int64_t self_offset(int64_t s) const {
    int64_t off = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      off += (s % sizes[d]) * strides[d];
      s /= sizes[d];
    }
    return off;
  }
  int64_t out_offset(int64_t s, int64_t len) const { return (s / inner) * len * inner + s % inner; }
};

int64_t slice_count(const Tensor& t, int64_t len) { return len == 0 ? 0 : t.numel() / len; }

void sort_kernel(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                 bool descending) {
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[dim];
  const int64_t stride = self.dim() == 0 ? 1 : self.strides()[dim];
  SliceWalker walk(self, dim);
  const int64_t slices = slice_count(self, len);
  dispatch_all(self.dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const T* src = static_cast<const T*>(self.data_ptr());
    T* vals = values.data_ptr<T>();
    int64_t* idxs = indices.data_ptr<int64_t>();
    parallel_for(0, slices, std::max<int64_t>(kGrainSize / len, 1), [&](int64_t b, int64_t e) {
      std::vector<std::pair<M, int64_t>> buf(static_cast<size_t>(len));
      for (int64_t s = b; s < e; ++s) {
        const T* p = src + walk.self_offset(s);
        for (int64_t j = 0; j < len; ++j) buf[j] = {static_cast<M>(p[j * stride]), j};
        // Stable for every call: equal values keep their input order, which
        // is also a valid result when stable=false.
        std::stable_sort(buf.begin(), buf.end(), [&](const auto& x, const auto& y) {
          return ordered_before(x.first, y.first, descending);
        });
        int64_t o = walk.out_offset(s, len);
        for (int64_t j = 0; j < len; ++j) {
          vals[o + j * walk.inner] = static_cast<T>(buf[j].first);
          idxs[o + j * walk.inner] = buf[j].second;
        }
      }
    });
  });
}

void topk_kernel(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t k,
                 int64_t dim, bool largest) {
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[dim];
  const int64_t stride = self.dim() == 0 ? 1 : self.strides()[dim];
  SliceWalker walk(self, dim);
  const int64_t slices = slice_count(self, len);
  if (k == 0) return;
  dispatch_all(self.dtype(), "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const T* src = static_cast<const T*>(self.data_ptr());
    T* vals = values.data_ptr<T>();
    int64_t* idxs = indices.data_ptr<int64_t>();
    parallel_for(0, slices, std::max<int64_t>(kGrainSize / len, 1), [&](int64_t b, int64_t e) {
      std::vector<std::pair<M, int64_t>> buf(static_cast<size_t>(len));
      for (int64_t s = b; s < e; ++s) {
        const T* p = src + walk.self_offset(s);
        for (int64_t j = 0; j < len; ++j) buf[j] = {static_cast<M>(p[j * stride]), j};
        // Ties broken by position make the result deterministic.
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), [&](const auto& x, const auto& y) {
          if (ordered_before(x.first, y.first, largest)) return true;
          if (ordered_before(y.first, x.first, largest)) return false;
          return x.second < y.second;
        });
        int64_t o = walk.out_offset(s, k);
        for (int64_t j = 0; j < k; ++j) {
          vals[o + j * walk.inner] = static_cast<T>(buf[j].first);
          idxs[o + j * walk.inner] = buf[j].second;
        }
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(sort, CPU, sort_kernel);
EMBER_REGISTER_KERNEL(topk, CPU, topk_kernel);

}  // namespace ember

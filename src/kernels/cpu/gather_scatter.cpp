// gather, scatter and scatter_add kernels over a TensorIter that skips dim.
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/indexing.h"
#include "kernels/tensor_iter.h"
#include "kernels/wrapping.h"

namespace ember {
namespace {

// Note [dim-excluded iteration]: every operand is viewed with index's sizes
// but size 1 at dim, keeping its own strides, so the TensorIter walks all
// positions except along dim; the loop body walks dim itself. Two iteration
// positions differ in some non-dim coordinate, so the self positions they
// write differ too: scatter runs in parallel without races even when index
// repeats along dim.
Tensor restride(const Tensor& t, IntArrayRef index_sizes, int64_t dim) {
  DimVector sizes(index_sizes);
  sizes[dim] = 1;
  return Tensor(make_intrusive<TensorImpl>(t.storage(), t.dtype(), std::move(sizes),
                                           DimVector(t.strides()), t.storage_offset()));
}

int64_t grain_for(int64_t dim_size) { return std::max<int64_t>(kGrainSize / std::max<int64_t>(dim_size, 1), 1); }

void gather_kernel(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const int64_t len = index.sizes()[dim];
  const int64_t so = out.strides()[dim], ss = self.strides()[dim], si = index.strides()[dim];
  Tensor out_r = restride(out, index.sizes(), dim), self_r = restride(self, index.sizes(), dim),
         index_r = restride(index, index.sizes(), dim);
  TensorIter iter({&out_r, &self_r, &index_r}, 1, "gather");
  dispatch_by_size(self.element_size(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    iter.for_each(
        [&](char** data, const int64_t* s, int64_t n) {
          for (int64_t k = 0; k < n; ++k) {
            T* o = reinterpret_cast<T*>(data[0] + k * s[0]);
            const T* in = reinterpret_cast<const T*>(data[1] + k * s[1]);
            const int64_t* idx = reinterpret_cast<const int64_t*>(data[2] + k * s[2]);
            for (int64_t j = 0; j < len; ++j) o[j * so] = in[idx[j * si] * ss];
          }
        },
        grain_for(len));
  });
}

// f(self_element, src_element) for each (index, src) pair along dim.
template <typename T, typename F>
void scatter_loop(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                  const char* op, const F& f) {
  const int64_t len = index.sizes()[dim];
  const int64_t ss = self.strides()[dim], si = index.strides()[dim], sr = src.strides()[dim];
  Tensor self_r = restride(self, index.sizes(), dim), index_r = restride(index, index.sizes(), dim),
         src_r = restride(src, index.sizes(), dim);
  TensorIter iter({&self_r, &index_r, &src_r}, 1, op);
  iter.for_each(
      [&](char** data, const int64_t* s, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          T* o = reinterpret_cast<T*>(data[0] + k * s[0]);
          const int64_t* idx = reinterpret_cast<const int64_t*>(data[1] + k * s[1]);
          const T* in = reinterpret_cast<const T*>(data[2] + k * s[2]);
          for (int64_t j = 0; j < len; ++j) f(o[idx[j * si] * ss], in[j * sr]);
        }
      },
      grain_for(len));
}

void scatter_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  dispatch_by_size(self.element_size(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    scatter_loop<T>(self, dim, index, src, "scatter", [](T& o, T v) { o = v; });
  });
}

void scatter_add_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  dispatch_all(self.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter_loop<T>(self, dim, index, src, "scatter_add", [](T& o, T v) {
      if constexpr (std::is_same_v<T, bool>) {
        o = o || v;
      } else {
        using M = opmath_t<T>;
        o = static_cast<T>(wrapping_add(static_cast<M>(o), static_cast<M>(v)));
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(gather, CPU, gather_kernel);
EMBER_REGISTER_KERNEL(scatter, CPU, scatter_kernel);
EMBER_REGISTER_KERNEL(scatter_add, CPU, scatter_add_kernel);

}  // namespace ember

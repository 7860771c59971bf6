// Kernel signatures of the Generic indexing ops (cat, index_select, gather,
// scatter, masked_select, nonzero, sort, topk). The ops layer validates
// shapes, dtypes and index ranges first; kernels assume valid input.
#pragma once

#include <cstdint>

#include "core/op_registry.h"
#include "ember/core/tensor.h"

namespace ember {

// out = cat(inputs, dim). out is contiguous; every input is contiguous, has
// out's dtype and matches out's sizes except along dim.
using CatKernel = void(const Tensor& out, TensorList inputs, int64_t dim);

// out[.., i, ..] = self[.., index[i], ..]. self and out contiguous; index is a
// contiguous 1-D int64 tensor with values in [0, self.size(dim)).
using IndexSelectKernel = void(const Tensor& out, const Tensor& self, int64_t dim,
                               const Tensor& index);

// out = self.gather(dim, index). out has index's sizes; index is int64 with
// values in range; any strides.
using GatherKernel = void(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);

// In place: self.scatter_(dim, index, src) or self.scatter_add_(...). src has
// self's dtype and at least index's sizes (a value may be expanded with
// stride 0); index is int64 with values in range; any strides.
using ScatterKernel = void(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);

// A new 1-D tensor of self's elements where mask is true, in row-major order.
// self and mask (bool) are contiguous with the same sizes.
using MaskedSelectKernel = Tensor(const Tensor& self, const Tensor& mask);

// A new [n, self.dim()] int64 tensor: coordinates of the non-zero elements in
// row-major order. self is contiguous.
using NonzeroKernel = Tensor(const Tensor& self);

// Sorts every slice of self along dim into values / indices (contiguous, with
// self's sizes). NaN sorts as the largest value; ties keep input order.
using SortKernel = void(const Tensor& values, const Tensor& indices, const Tensor& self,
                        int64_t dim, bool descending);

// The k largest (or smallest) of every slice along dim, in sorted order, into
// values / indices (contiguous, self's sizes with k along dim). NaN counts as
// the largest value; ties prefer the lower index.
using TopkKernel = void(const Tensor& values, const Tensor& indices, const Tensor& self,
                        int64_t k, int64_t dim, bool largest);

// A new contiguous tensor for kernels whose output size depends on the data
// (masked_select, nonzero).
inline Tensor kernel_empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  auto storage = make_intrusive<StorageImpl>(compute_nbytes(sizes, dtype, "kernel_empty"), device);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, DimVector(sizes),
                                           contiguous_strides(sizes), 0));
}

// Trivially copyable stand-in of a dtype's width: copy-only kernels (cat,
// index_select, gather, scatter) move bits, so they dispatch on element size.
template <typename F>
decltype(auto) dispatch_by_size(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: return f(static_cast<uint8_t*>(nullptr));
    case 2: return f(static_cast<uint16_t*>(nullptr));
    case 4: return f(static_cast<uint32_t*>(nullptr));
    default: return f(static_cast<uint64_t*>(nullptr));
  }
}

}  // namespace ember

// TensorImpl metadata upkeep.
#include "ember/core/tensor_impl.h"

#include "ember/core/error.h"

namespace ember {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t compute_numel(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, DimVector sizes, DimVector strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  EMBER_ASSERT(sizes_.size() == strides_.size());
  refresh();
}

// One pass fills sizes, strides and numel: this runs for every op's output.
TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), offset_(0), dtype_(dtype) {
  const size_t n = sizes.size();
  sizes_.resize_for_overwrite(n);
  strides_.resize_for_overwrite(n);
  int64_t* sz = sizes_.data();
  int64_t* st = strides_.data();
  int64_t stride = 1, numel = 1;
  for (size_t i = n; i-- > 0;) {
    sz[i] = sizes[i];
    st[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
    numel *= sizes[i];
  }
  numel_ = numel;
  is_contiguous_ = true;
}

void TensorImpl::set_sizes_and_strides(DimVector sizes, DimVector strides, int64_t offset) {
  EMBER_ASSERT(sizes.size() == strides.size());
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  refresh();
}

void TensorImpl::refresh() {
  numel_ = compute_numel(sizes_);
  // Dims of size 1 may have any stride (PyTorch's definition).
  bool contig = true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      contig = false;
      break;
    }
    expected *= sizes_[i];
  }
  is_contiguous_ = contig || numel_ == 0;
}

}  // namespace ember

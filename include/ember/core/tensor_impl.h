// The state behind a Tensor handle: storage + offset + sizes + strides (in
// elements) + dtype + device, and a nullable autograd slot.
#pragma once

#include <cstddef>
#include <memory>

#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"
#include "ember/core/object_pool.h"
#include "ember/core/scalar_type.h"
#include "ember/core/small_vector.h"
#include "ember/core/storage.h"

namespace ember {

// Implemented by autograd (AutogradMeta, grad_graph.h); the TensorImpl only
// reserves room for it, so this header includes nothing upward.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
  virtual bool requires_grad() const = 0;
  virtual void set_requires_grad(bool v) = 0;
};

// Invariants:
//  - sizes_.size() == strides_.size() == dim(); sizes are >= 0.
//  - every element addressed by (offset_, sizes_, strides_) lies inside storage
//    (checked on creation by every constructor, Note [size checks]).
//  - numel_ == product of sizes_ (cached; recomputed by set_sizes_and_strides).
//  - is_contiguous_ is cached for the row-major layout.
class TensorImpl : public RefCounted {
 public:
  EMBER_POOLED_NEW
  TensorImpl(Storage storage, ScalarType dtype, DimVector sizes, DimVector strides,
             int64_t offset);
  // A contiguous tensor at offset 0 (the common case, kept cheap).
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes);
  // A contiguous tensor that allocates its own storage of numel * itemsize
  // bytes on device: sizes, strides, numel and the byte count in one pass
  // (every op's output comes through here, via empty()).
  TensorImpl(ScalarType dtype, IntArrayRef sizes, Device device);

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const DimVector& sizes() const { return sizes_; }
  const DimVector& strides() const { return strides_; }
  int64_t storage_offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  bool is_contiguous() const { return is_contiguous_; }
  char* data() const {
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  void set_sizes_and_strides(DimVector sizes, DimVector strides, int64_t offset);

  // Note [inline autograd meta]: the autograd metadata is built inside the
  // TensorImpl on first use, not allocated beside it. Every recorded op's
  // output gets one, and a separate pool block cost an allocation, a free
  // and a pointer chase per op (W3). Null for tensors that never touched
  // autograd; the bytes stay untouched for them.
  static constexpr size_t kAutogradMetaBytes = 48;
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_; }
  template <typename Meta>
  Meta& emplace_autograd_meta() {
    static_assert(sizeof(Meta) <= kAutogradMetaBytes && alignof(Meta) <= 16);
    Meta* m = std::construct_at(reinterpret_cast<Meta*>(autograd_slot_));
    autograd_meta_ = m;
    return *m;
  }
  ~TensorImpl() override {
    if (autograd_meta_) std::destroy_at(autograd_meta_);
  }

 private:
  void refresh();

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t offset_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  AutogradMetaInterface* autograd_meta_ = nullptr;  // points into autograd_slot_
  alignas(16) std::byte autograd_slot_[kAutogradMetaBytes];
};

// Note [size checks]: every size product of a tensor (numel, numel *
// itemsize, the extent offset + sum((size - 1) * stride)) is computed with
// overflow detection in the pass that fills the metadata, and a layout that
// reaches outside its storage is refused. A shape read from an untrusted file
// therefore cannot yield a tensor that claims more memory than it owns; the
// error names the shape, the dtype and what overflowed. The checks ride on the
// existing single pass (one __builtin_*_overflow per dim and one branch at
// the end), so the per-op cost does not change measurably.

// Row-major strides for sizes (sizes must already be valid).
DimVector contiguous_strides(IntArrayRef sizes);
// Product of sizes; an ember::Error when a size is negative or the product
// overflows int64.
int64_t compute_numel(IntArrayRef sizes);
// numel(sizes) * element_size(dtype) as a byte count; an ember::Error naming
// `what`, the shape and the dtype when a size is negative or the count
// overflows int64.
size_t compute_nbytes(IntArrayRef sizes, ScalarType dtype, const char* what = "tensor");
// Bytes a strided layout needs from its storage: (1 + the largest element
// index addressed) * itemsize, or 0 when some size is 0. An ember::Error naming
// `what` when a size, stride or offset is negative or a product overflows.
size_t compute_strided_nbytes(IntArrayRef sizes, IntArrayRef strides, int64_t offset, ScalarType dtype,
                              const char* what = "tensor");

}  // namespace ember

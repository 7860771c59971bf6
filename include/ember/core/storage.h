// A block of memory shared by a tensor and all its views, with the version
// counter that autograd checks (Note [version counter]).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"
#include "ember/core/object_pool.h"

namespace ember {

// Note [version counter]: every in-place write to any view bumps the version
// of the storage; autograd saves the version with a tensor and refuses to use
// it in backward if it changed.
class StorageImpl : public RefCounted {
 public:
  EMBER_POOLED_NEW
  // Storages of up to kInlineBytes keep their bytes inside the object
  // (16-byte aligned): scalars and tiny tensors are created and freed on
  // every op of a small-tensor loop, and the allocator round trip was a
  // tenth of the per-op cost. Larger ones come from the caching allocator
  // (64-byte aligned).
  static constexpr size_t kInlineBytes = 32;
  // Owns nbytes: inline, or from the caching allocator.
  StorageImpl(size_t nbytes, Device device);
  // Wraps external memory (from_blob); deleter may be empty (not owned).
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  bool owned_by_allocator_;
  std::function<void(void*)> deleter_;
  std::atomic<uint32_t> version_{0};
  alignas(16) unsigned char inline_[kInlineBytes];
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember

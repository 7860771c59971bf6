// Storage lifetime: allocator-owned or wrapped external memory.
#include "ember/core/storage.h"

#include "ember/core/allocator.h"
#include "ember/core/error.h"

namespace ember {

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : data_(nullptr), nbytes_(nbytes), device_(device), owned_by_allocator_(true) {
  if (!device.is_cpu()) check_device_available(device);
  if (nbytes <= kInlineBytes && device.is_cpu()) {
    data_ = inline_;
    owned_by_allocator_ = false;  // nothing to free; deleter_ stays empty
    return;
  }
  data_ = cpu_alloc(nbytes);
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device,
                         std::function<void(void*)> deleter)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      owned_by_allocator_(false),
      deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (owned_by_allocator_) {
    cpu_free(data_, nbytes_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace ember

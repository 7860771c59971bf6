// Reference-counted handles whose count lives in the object (one allocation,
// no control block): Tensor and Storage are cheap to copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when this was the last reference. A count of 1 seen by its
  // holder cannot change under it (no other handle exists to copy, and there
  // are no weak references), so the sole owner skips the locked instruction:
  // most tensors die with one handle, and W3 counts every atomic.
  bool decref() const {
    if (refcount_.load(std::memory_order_acquire) == 1) return true;
    return refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <typename T>
  friend class IntrusivePtr;
  // A new object's first reference: a plain store, nobody else can see it.
  void init_ref() const { refcount_.store(1, std::memory_order_relaxed); }

  mutable std::atomic<int64_t> refcount_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}  // NOLINT
  explicit IntrusivePtr(T* p) : p_(p) {
    if (p_) p_->incref();
  }
  // Takes the first reference to a new object (make_intrusive).
  struct AdoptNew {};
  IntrusivePtr(T* fresh, AdoptNew) : p_(fresh) { p_->init_ref(); }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) {
    if (p_) p_->incref();
  }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  IntrusivePtr(IntrusivePtr<U> o) : p_(o.release()) {}  // NOLINT: upcast
  ~IntrusivePtr() { reset(); }
  IntrusivePtr& operator=(IntrusivePtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  void reset() {
    if (p_ && p_->decref()) delete p_;
    p_ = nullptr;
  }
  // Gives up ownership without decrementing (used for upcasts).
  T* release() { return std::exchange(p_, nullptr); }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  int64_t use_count() const { return p_ ? p_->use_count() : 0; }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...), typename IntrusivePtr<T>::AdoptNew{});  // the only `new`
}

}  // namespace ember

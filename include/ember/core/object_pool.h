// Small-object pool for the objects every op creates (TensorImpl, Storage,
// autograd nodes and metadata): per-thread free lists, no locks on the hot
// path. Per-op overhead on small tensors is mostly allocation otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ember {

// Blocks of up to kPoolMaxBytes come from per-thread free lists (refilled in
// batches from a shared list or a new 64 KiB slab); larger ones from
// ::operator new. Memory is kept for reuse, never returned to the system.
constexpr size_t kPoolMaxBytes = 512;

namespace detail {
// Note [pool fast path]: the per-thread lists are declared here so that the
// common allocation (pop a block) and free (push one) are inlined into the
// caller; every op allocates and frees a few objects, and the calls cost
// about as much as the work. Everything else (refilling, handing blocks to
// the shared lists, a thread's first block, big sizes) is out of line in
// object_pool.cpp (Note [object pool]).
constexpr size_t kPoolGranule = 16;
constexpr size_t kPoolClasses = kPoolMaxBytes / kPoolGranule;
struct PoolFreeBlock {
  PoolFreeBlock* next;
};
struct PoolLists {
  std::array<PoolFreeBlock*, kPoolClasses> head{};
  std::array<uint32_t, kPoolClasses> count{};
};
extern thread_local constinit PoolLists tls_pool;
// Blocks a thread keeps per class before handing half to the shared lists.
constexpr uint32_t pool_local_limit(size_t cls) {
  constexpr size_t kMaxLocalBytes = size_t{4} << 20;
  constexpr uint32_t kMinLocal = 8192;
  size_t by_bytes = kMaxLocalBytes / ((cls + 1) * kPoolGranule);
  return static_cast<uint32_t>(by_bytes > kMinLocal ? by_bytes : kMinLocal);
}
void* pool_alloc_slow(size_t nbytes);
void pool_free_slow(void* p, size_t nbytes) noexcept;
}  // namespace detail

inline void* pool_alloc(size_t nbytes) {
  if (nbytes - 1 < kPoolMaxBytes) {  // also false for 0
    const size_t cls = (nbytes - 1) / detail::kPoolGranule;
    detail::PoolLists& l = detail::tls_pool;
    if (detail::PoolFreeBlock* b = l.head[cls]) {
      l.head[cls] = b->next;
      --l.count[cls];
      // The next block may have been freed long ago (a torn-down graph):
      // start loading it before the next allocation reads it.
      if (b->next) __builtin_prefetch(b->next);
      return b;
    }
  }
  return detail::pool_alloc_slow(nbytes);
}

inline void pool_free(void* p, size_t nbytes) noexcept {
  if (p && nbytes - 1 < kPoolMaxBytes) {
    const size_t cls = (nbytes - 1) / detail::kPoolGranule;
    detail::PoolLists& l = detail::tls_pool;
    const uint32_t c = l.count[cls];
    // An empty list may be a thread's first free, a full one must donate.
    if (c != 0 && c < detail::pool_local_limit(cls)) {
      auto* b = static_cast<detail::PoolFreeBlock*>(p);
      b->next = l.head[cls];
      l.head[cls] = b;
      l.count[cls] = c + 1;
      return;
    }
  }
  detail::pool_free_slow(p, nbytes);
}

// std-compatible allocator over the pool (for allocate_shared and vectors).
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(pool_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pool_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

// Gives a class pooled operator new/delete.
#define EMBER_POOLED_NEW                                                              \
  static void* operator new(size_t n) { return ::ember::pool_alloc(n); }             \
  static void operator delete(void* p, size_t n) noexcept { ::ember::pool_free(p, n); }

}  // namespace ember

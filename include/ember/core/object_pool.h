// Small-object pool for the objects every op creates (TensorImpl, Storage,
// autograd nodes and metadata): per-thread free lists, no locks on the hot
// path. Per-op overhead on small tensors is mostly allocation otherwise.
#pragma once

#include <cstddef>
#include <memory>

namespace ember {

// Blocks of up to kPoolMaxBytes come from per-thread free lists (refilled in
// batches from a shared list or a new 64 KiB slab); larger ones from
// ::operator new. Memory is kept for reuse, never returned to the system.
constexpr size_t kPoolMaxBytes = 512;
void* pool_alloc(size_t nbytes);
void pool_free(void* p, size_t nbytes) noexcept;

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

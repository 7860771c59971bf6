// The small-object pool (see object_pool.h).
//
// Note [object pool]: size classes of 16 bytes up to 512. Each thread keeps a
// singly linked free list per class (the fast paths are inline in the header,
// Note [pool fast path]); past its limit (4 MiB of blocks, at least 8192) it
// hands half to a shared list, and a thread that exits
// donates all of its blocks there, so worker threads do not strand memory.
// Slabs are never freed. The limit is in bytes so that freeing a long autograd
// chain (10,000 nodes in W3) does not ping-pong blocks through the mutex.
#include "ember/core/object_pool.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace ember {

namespace detail {
// Note [pool thread exit]: the lists are trivially destructible and constant
// initialised, so the hot path reads them without a TLS guard or wrapper call
// (a thread_local with a destructor costs both on every access). Returning a
// thread's blocks at exit is the job of a separate thread_local that the slow
// paths touch: a thread's first allocation refills, and its first free of a
// class finds the list empty.
thread_local constinit PoolLists tls_pool;
}  // namespace detail

namespace {

using detail::kPoolClasses;
using detail::kPoolGranule;
using detail::PoolFreeBlock;
using detail::pool_local_limit;
using detail::tls_pool;

constexpr uint32_t kBatch = 256;
constexpr size_t kSlabBytes = 64 * 1024;

struct SharedLists {
  std::mutex mu;
  std::array<std::vector<void*>, kPoolClasses> blocks;
};

SharedLists& shared() {
  static auto* s = new SharedLists();  // NOLINT: lives until exit, used by exiting threads
  return *s;
}

void push(size_t cls, void* p) {
  auto* b = static_cast<PoolFreeBlock*>(p);
  b->next = tls_pool.head[cls];
  tls_pool.head[cls] = b;
  ++tls_pool.count[cls];
}

void* pop(size_t cls) {
  PoolFreeBlock* b = tls_pool.head[cls];
  tls_pool.head[cls] = b->next;
  --tls_pool.count[cls];
  return b;
}

// Moves n blocks of a class to the shared lists.
void donate(size_t cls, uint32_t n) {
  SharedLists& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);
  for (uint32_t i = 0; i < n && tls_pool.head[cls]; ++i) s.blocks[cls].push_back(pop(cls));
}

struct ExitDonor {
  ~ExitDonor() {
    for (size_t c = 0; c < kPoolClasses; ++c) donate(c, tls_pool.count[c]);
  }
};

void register_exit_donor() {
  thread_local ExitDonor donor;
  (void)donor;
}

void refill(size_t cls) {
  register_exit_donor();
  {
    SharedLists& s = shared();
    std::lock_guard<std::mutex> lock(s.mu);
    auto& v = s.blocks[cls];
    for (uint32_t i = 0; i < kBatch && !v.empty(); ++i) {
      push(cls, v.back());
      v.pop_back();
    }
  }
  if (tls_pool.head[cls]) return;
  size_t size = (cls + 1) * kPoolGranule;
  char* slab = static_cast<char*>(std::aligned_alloc(64, kSlabBytes));
  if (!slab) throw std::bad_alloc();
  for (size_t off = 0; off + size <= kSlabBytes; off += size) push(cls, slab + off);
}

}  // namespace

namespace detail {

void* pool_alloc_slow(size_t nbytes) {
  if (nbytes == 0 || nbytes > kPoolMaxBytes) return ::operator new(nbytes);
  size_t cls = (nbytes - 1) / kPoolGranule;
  if (!tls_pool.head[cls]) refill(cls);
  return pop(cls);
}

void pool_free_slow(void* p, size_t nbytes) noexcept {
  if (!p) return;
  if (nbytes == 0 || nbytes > kPoolMaxBytes) {
    ::operator delete(p);
    return;
  }
  size_t cls = (nbytes - 1) / kPoolGranule;
  push(cls, p);
  if (tls_pool.count[cls] == 1) register_exit_donor();  // a thread that frees but never allocated
  if (tls_pool.count[cls] > pool_local_limit(cls)) donate(cls, pool_local_limit(cls) / 2);
}

}  // namespace detail
}  // namespace ember

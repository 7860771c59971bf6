// The small-object pool (see object_pool.h).
//
// Note [object pool]: size classes of 16 bytes up to 512. Each thread keeps a
// singly linked free list per class; past its limit (kMaxLocalBytes, at least
// kMinLocal blocks) it hands half to a shared list, and a thread that exits
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
namespace {

constexpr size_t kGranule = 16;
constexpr size_t kClasses = kPoolMaxBytes / kGranule;
constexpr uint32_t kMinLocal = 8192;
constexpr size_t kMaxLocalBytes = size_t{4} << 20;
constexpr uint32_t local_limit(size_t cls) {
  size_t by_bytes = kMaxLocalBytes / ((cls + 1) * kGranule);
  return static_cast<uint32_t>(by_bytes > kMinLocal ? by_bytes : kMinLocal);
}
constexpr uint32_t kBatch = 256;
constexpr size_t kSlabBytes = 64 * 1024;

struct FreeBlock {
  FreeBlock* next;
};

struct SharedLists {
  std::mutex mu;
  std::array<std::vector<void*>, kClasses> blocks;
};

SharedLists& shared() {
  static auto* s = new SharedLists();  // NOLINT: lives until exit, used by exiting threads
  return *s;
}

struct LocalLists {
  std::array<FreeBlock*, kClasses> head{};
  std::array<uint32_t, kClasses> count{};

  void push(size_t cls, void* p) {
    auto* b = static_cast<FreeBlock*>(p);
    b->next = head[cls];
    head[cls] = b;
    ++count[cls];
  }
  void* pop(size_t cls) {
    FreeBlock* b = head[cls];
    head[cls] = b->next;
    --count[cls];
    // The next block of this class may have been freed long ago (a torn-down
    // graph): start loading it now, before the next allocation reads it.
    if (head[cls]) __builtin_prefetch(head[cls]);
    return b;
  }
  // Moves n blocks of a class to the shared lists. Out of line, like refill
  // and register_exit_donor, so the fast paths save no registers.
  [[gnu::noinline]] void donate(size_t cls, uint32_t n) {
    SharedLists& s = shared();
    std::lock_guard<std::mutex> lock(s.mu);
    for (uint32_t i = 0; i < n && head[cls]; ++i) s.blocks[cls].push_back(pop(cls));
  }
  [[gnu::noinline]] void refill(size_t cls);
};

// Note [pool thread exit]: the lists are trivially destructible and constant
// initialised, so the hot path reads them without a TLS guard or wrapper call
// (a thread_local with a destructor costs both on every access). Returning a
// thread's blocks at exit is the job of a separate thread_local that refill()
// touches: every thread refills before its first allocation.
constinit thread_local LocalLists tls_lists;

LocalLists& local() { return tls_lists; }

struct ExitDonor {
  ~ExitDonor() {
    for (size_t c = 0; c < kClasses; ++c) tls_lists.donate(c, tls_lists.count[c]);
  }
};

[[gnu::noinline]] void register_exit_donor() {
  thread_local ExitDonor donor;
  (void)donor;
}

void LocalLists::refill(size_t cls) {
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
  if (head[cls]) return;
  size_t size = (cls + 1) * kGranule;
  char* slab = static_cast<char*>(std::aligned_alloc(64, kSlabBytes));
  if (!slab) throw std::bad_alloc();
  for (size_t off = 0; off + size <= kSlabBytes; off += size) push(cls, slab + off);
}

}  // namespace

void* pool_alloc(size_t nbytes) {
  if (nbytes == 0 || nbytes > kPoolMaxBytes) return ::operator new(nbytes);
  size_t cls = (nbytes - 1) / kGranule;
  LocalLists& l = local();
  if (!l.head[cls]) l.refill(cls);
  return l.pop(cls);
}

void pool_free(void* p, size_t nbytes) noexcept {
  if (!p) return;
  if (nbytes == 0 || nbytes > kPoolMaxBytes) {
    ::operator delete(p);
    return;
  }
  size_t cls = (nbytes - 1) / kGranule;
  LocalLists& l = local();
  l.push(cls, p);
  if (l.count[cls] == 1) register_exit_donor();  // a thread that frees but never allocated
  if (l.count[cls] > local_limit(cls)) l.donate(cls, local_limit(cls) / 2);
}

}  // namespace ember

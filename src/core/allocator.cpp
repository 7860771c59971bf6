// The caching CPU allocator behind every tensor.
//
// Note [size classes]: requests are rounded up to a size class (64-byte steps
// below 64 KiB, eight classes per power of two above), and freed blocks wait in
// a per-class free list. Memory a workload frees is reused by the next
// same-shaped tensor; the cache is capped so it never hoards more than
// kMaxCachedBytes.
//
// Note [thread cache]: blocks up to kThreadCacheLimit bytes go through a small
// per-thread free list first, without the mutex: per-op overhead on tiny
// tensors is dominated by allocation otherwise. Each thread keeps at most
// kThreadCacheDepth blocks per class and returns them when it exits.
#include "ember/core/allocator.h"

#include <array>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "ember/core/error.h"

namespace ember {
namespace {

constexpr size_t kSmallStep = 64;
constexpr size_t kSmallLimit = 64 * 1024;
constexpr size_t kMaxCachedBytes = size_t{2} << 30;

size_t size_class(size_t n) {
  if (n == 0) n = 1;
  if (n <= kSmallLimit) return (n + kSmallStep - 1) / kSmallStep * kSmallStep;
  size_t pow2 = std::bit_floor(n);
  size_t step = pow2 / 8;
  return (n + step - 1) / step * step;
}

class CachingCpuAllocator {
 public:
  void* allocate(size_t nbytes) {
    size_t cls = size_class(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= cls;
        note_alloc(cls);
        ++stats_.cache_hits;
        return p;
      }
      ++stats_.cache_misses;
    }
    void* p = std::aligned_alloc(kCpuAlignment, cls);
    if (!p) {
      empty_cache();
      p = std::aligned_alloc(kCpuAlignment, cls);
    }
    EMBER_CHECK(p != nullptr, "out of memory: failed to allocate {} bytes on cpu", cls);
    std::lock_guard<std::mutex> lock(mu_);
    note_alloc(cls);
    return p;
  }

  void deallocate(void* p, size_t nbytes) {
    if (!p) return;
    size_t cls = size_class(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= cls;
      if (stats_.cached_bytes + cls <= kMaxCachedBytes) {
        free_[cls].push_back(p);
        stats_.cached_bytes += cls;
        return;
      }
    }
    std::free(p);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    stats_.cached_bytes = 0;
  }

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

 private:
  void note_alloc(size_t cls) {
    stats_.allocated_bytes += cls;
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes)
      stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
};

constexpr size_t kThreadCacheLimit = 4096;
constexpr size_t kThreadCacheClasses = kThreadCacheLimit / kSmallStep;
constexpr size_t kThreadCacheDepth = 32;

CachingCpuAllocator& allocator();

// Trivially destructible and constant initialised, so reading it costs no TLS
// guard (see Note [pool thread exit] in object_pool.cpp); blocks go back to
// the shared cache at thread exit through ThreadCacheReturn, registered when a
// thread first caches a block.
struct ThreadCache {
  std::array<std::array<void*, kThreadCacheDepth>, kThreadCacheClasses> blocks{};
  std::array<uint8_t, kThreadCacheClasses> count{};
  uint64_t alloc_calls = 0;
};

constinit thread_local ThreadCache tls_cache;

ThreadCache& thread_cache() { return tls_cache; }

struct ThreadCacheReturn {
  ~ThreadCacheReturn();
};

[[gnu::noinline]] void register_cache_return() {
  thread_local ThreadCacheReturn r;
  (void)r;
}

CachingCpuAllocator& allocator() {
  // Leaked on purpose: tensors held by static objects may be freed after
  // main returns, and must find the allocator alive.
  static auto* a = new CachingCpuAllocator();  // NOLINT
  return *a;
}

ThreadCacheReturn::~ThreadCacheReturn() {
  ThreadCache& tc = tls_cache;
  for (size_t c = 0; c < kThreadCacheClasses; ++c) {
    for (size_t i = 0; i < tc.count[c]; ++i) allocator().deallocate(tc.blocks[c][i], (c + 1) * kSmallStep);
    tc.count[c] = 0;
  }
}

}  // namespace

void* cpu_alloc(size_t nbytes) {
  ThreadCache& tc = thread_cache();
  ++tc.alloc_calls;
  if (nbytes <= kThreadCacheLimit) {
    size_t cls = size_class(nbytes) / kSmallStep - 1;
    if (tc.count[cls] > 0) return tc.blocks[cls][--tc.count[cls]];
    return allocator().allocate((cls + 1) * kSmallStep);
  }
  return allocator().allocate(nbytes);
}

void cpu_free(void* p, size_t nbytes) {
  if (p && nbytes <= kThreadCacheLimit) {
    size_t cls = size_class(nbytes) / kSmallStep - 1;
    ThreadCache& tc = thread_cache();
    if (tc.count[cls] < kThreadCacheDepth) {
      if (tc.count[cls] == 0) register_cache_return();
      tc.blocks[cls][tc.count[cls]++] = p;
      return;
    }
  }
  allocator().deallocate(p, nbytes);
}

void cpu_empty_cache() { allocator().empty_cache(); }
AllocatorStats cpu_allocator_stats() { return allocator().stats(); }
void cpu_reset_peak_allocated_bytes() { allocator().reset_peak(); }
uint64_t cpu_alloc_calls_on_this_thread() { return tls_cache.alloc_calls; }

}  // namespace ember

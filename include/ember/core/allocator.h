// CPU memory: 64-byte aligned blocks from a caching allocator, so hot loops
// that free and re-allocate same-sized tensors never reach malloc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember {

struct AllocatorStats {
  size_t allocated_bytes = 0;  // handed out and not yet freed
  size_t cached_bytes = 0;     // held in free lists for reuse
  size_t peak_allocated_bytes = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
};

constexpr size_t kCpuAlignment = 64;

// Returns a block of at least nbytes (64-byte aligned); never null.
void* cpu_alloc(size_t nbytes);
// Returns a block from cpu_alloc with the same nbytes to the cache.
void cpu_free(void* p, size_t nbytes);
// Frees every cached block (what torch.cuda.empty_cache does on GPUs).
void cpu_empty_cache();
AllocatorStats cpu_allocator_stats();
// Restarts peak_allocated_bytes from what is allocated now (as
// torch.cuda.reset_peak_memory_stats does), to measure one region's peak.
void cpu_reset_peak_allocated_bytes();
// cpu_alloc calls the calling thread has made (served from a cache or not):
// what a benchmark or test counts to show that a loop allocates nothing.
uint64_t cpu_alloc_calls_on_this_thread();

}  // namespace ember

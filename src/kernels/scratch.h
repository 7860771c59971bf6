// Scratch memory for one kernel call (Note [kernel scratch] in scratch.cpp).
#pragma once

#include <cstddef>
#include <vector>

namespace ember {

// Slots kept between kernel calls, taken and released in stack order and grown
// to the largest request seen at their depth. Used by one thread at a time.
class ScratchPool {
 public:
  ScratchPool() = default;
  ~ScratchPool();
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  // A block of at least nbytes (64-byte aligned) and its slot index.
  void* take(size_t nbytes, size_t& slot);
  void release(size_t slot);
  size_t bytes_held() const;

 private:
  struct Slot {
    void* p = nullptr;
    size_t nbytes = 0;
    bool in_use = false;
  };
  std::vector<Slot> slots_;
  size_t top_ = 0;  // slots_[top_..] are free
};

// While alive, the calling thread's ScratchBuffers come from `pool`.
class ScratchScope {
 public:
  explicit ScratchScope(ScratchPool* pool);
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

 private:
  ScratchPool* previous_;
};

// A 64-byte aligned scratch block for the duration of a kernel call: from the
// thread's ScratchScope pool when there is one, else from cpu_alloc.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(size_t nbytes);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return p_; }

 private:
  size_t nbytes_;
  void* p_ = nullptr;
  ScratchPool* pool_ = nullptr;
  size_t slot_ = 0;
};

}  // namespace ember

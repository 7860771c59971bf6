// Note [kernel scratch]: some kernels need memory for one call only: oneDNN's
// reorder targets (blocked layouts) and scratchpads, operands packed to
// float32. By default each block comes from cpu_alloc and goes back when the
// call ends (the caching allocator makes that cheap). The inference runtime
// wants a steady-state run that allocates nothing, so a prepared graph runs
// under a ScratchScope: its ScratchPool keeps the blocks, hands out slot i to
// the i-th block alive at once (calls nest: a packed operand is alive while
// the GEMM takes its scratchpad) and grows a slot only for a larger request.
// Kernels on OpenMP worker threads see no scope and use cpu_alloc.
#include "kernels/scratch.h"

#include <algorithm>

#include "ember/core/allocator.h"

namespace ember {

namespace {
thread_local ScratchPool* current_pool = nullptr;
}  // namespace

ScratchPool::~ScratchPool() {
  for (Slot& s : slots_)
    if (s.p) cpu_free(s.p, s.nbytes);
}

void* ScratchPool::take(size_t nbytes, size_t& slot) {
  if (top_ == slots_.size()) slots_.emplace_back();
  Slot& s = slots_[top_];
  if (s.nbytes < nbytes) {
    if (s.p) cpu_free(s.p, s.nbytes);
    s.p = cpu_alloc(nbytes);
    s.nbytes = nbytes;
  }
  s.in_use = true;
  slot = top_++;
  return s.p;
}

void ScratchPool::release(size_t slot) {
  slots_[slot].in_use = false;
  while (top_ > 0 && !slots_[top_ - 1].in_use) --top_;
}

size_t ScratchPool::bytes_held() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.nbytes;
  return n;
}

ScratchScope::ScratchScope(ScratchPool* pool) : previous_(current_pool) { current_pool = pool; }
ScratchScope::~ScratchScope() { current_pool = previous_; }

ScratchBuffer::ScratchBuffer(size_t nbytes) : nbytes_(nbytes) {
  if (nbytes == 0) return;
  pool_ = current_pool;
  p_ = pool_ ? pool_->take(nbytes, slot_) : cpu_alloc(nbytes);
}

ScratchBuffer::~ScratchBuffer() {
  if (!p_) return;
  if (pool_) pool_->release(slot_);
  else cpu_free(p_, nbytes_);
}

}  // namespace ember

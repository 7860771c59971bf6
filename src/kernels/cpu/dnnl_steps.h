// Prepared oneDNN work (Note [prepared kernels] in kernels/cpu/prepared.cpp):
// owned buffers, primitives with their argument maps built once, reorders
// between memories that already exist, and one scratchpad block shared by
// steps that run one after another.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/allocator.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/nn.h"

namespace ember::dnnl_steps {

// A block from cpu_alloc owned for the prepared kernel's lifetime.
class Block {
 public:
  Block() = default;
  explicit Block(size_t nbytes) : n_(std::max<size_t>(nbytes, 64)), p_(cpu_alloc(n_)) {}
  ~Block() {
    if (p_) cpu_free(p_, n_);
  }
  Block(Block&& o) noexcept : n_(o.n_), p_(o.p_) { o.p_ = nullptr; }
  Block& operator=(Block&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
    return *this;
  }
  void* get() const { return p_; }

 private:
  size_t n_ = 0;
  void* p_ = nullptr;
};

// One primitive and its arguments, built once.
struct Step {
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::memory::desc scratch;  // its scratchpad (user mode), given a buffer by give_scratchpads
  void run() const { prim.execute(dnnl_util::cpu_stream(), args); }
};

// A reorder from -> to on memories that already exist (with `attr`'s scales, if any).
inline Step reorder_step(const dnnl::memory& from, const dnnl::memory& to,
                         dnnl::primitive_attr attr = dnnl_util::user_scratchpad()) {
  auto& eng = dnnl_util::cpu_engine();
  dnnl::reorder::primitive_desc pd(eng, from.get_desc(), eng, to.get_desc(), attr);
  return {dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, pd.scratchpad_desc()};
}

// A copy of `data` (laid out as `user`) in the layout a primitive chose for
// its weights, made once; for int8 weights the reorder also computes the
// compensation a signed source needs.
inline Block packed_copy(const dnnl::memory::desc& user, const void* data, const dnnl::memory::desc& packed) {
  Block b(packed.get_size());
  auto& eng = dnnl_util::cpu_engine();
  dnnl::memory from(user, eng, const_cast<void*>(data)), to(packed, eng, b.get());
  dnnl::reorder(from, to).execute(dnnl_util::cpu_stream(), from, to);
  return b;
}

// oneDNN's weight dims of a conv: [c_out, c_in, kh, kw], or [g, c_out/g, c_in/g, kh, kw] when grouped.
inline dnnl::memory::dims conv_weight_dims(const ConvParams& p) {
  return p.groups == 1 ? dnnl::memory::dims{p.c_out, p.c_in, p.kh, p.kw}
                       : dnnl::memory::dims{p.groups, p.c_out / p.groups, p.c_in / p.groups, p.kh, p.kw};
}

// The padding a pooling window needs past the input's end for `out` outputs.
inline int64_t end_pad(int64_t out, int64_t s, int64_t k, int64_t in, int64_t pad) {
  return std::max<int64_t>((out - 1) * s + k - in - pad, 0);
}

// The steps run one after another, so their scratchpads share one block.
inline Block give_scratchpads(const std::vector<Step*>& steps) {
  size_t n = 0;
  for (const Step* s : steps) n = std::max(n, s->scratch.get_size());
  if (n == 0) return {};
  Block block(n);
  for (Step* s : steps)
    if (s->scratch.get_size() > 0)
      s->args.insert_or_assign(DNNL_ARG_SCRATCHPAD, dnnl::memory(s->scratch, dnnl_util::cpu_engine(), block.get()));
  return block;
}

}  // namespace ember::dnnl_steps

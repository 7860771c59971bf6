// oneDNN plumbing shared by the conv and pool kernels: engine, stream,
// scratch buffers, and a primitive whose plain (NCHW) user tensors are
// reordered to and from the blocked layouts oneDNN prefers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/core/allocator.h"
#include "kernels/scratch.h"

namespace ember::dnnl_util {

using dnnl::memory;

inline dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// With the OpenMP runtime a CPU stream holds no per-execution state, so one
// serves every thread.
inline dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

// Scratch for one call: see Note [kernel scratch] (kernels/scratch.h).
using Buffer = ScratchBuffer;

// User scratchpads everywhere: a primitive that owns its scratchpad cannot
// run on two threads at once, and cached primitives are shared.
inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// One argument of a primitive: the plain layout the caller holds and the one
// the primitive was created with; a cached reorder bridges them when they differ.
struct Operand {
  int arg = 0;
  bool output = false;
  memory::desc user, prim;
  dnnl::reorder reorder;  // user -> prim for inputs, prim -> user for outputs
  memory::desc reorder_scratch;
  bool needs_reorder() const { return user != prim; }
};

inline Operand make_operand(int arg, bool output, const memory::desc& user, const memory::desc& prim) {
  Operand o{arg, output, user, prim, {}, {}};
  if (o.needs_reorder()) {
    auto& eng = cpu_engine();
    dnnl::reorder::primitive_desc pd = output ? dnnl::reorder::primitive_desc(eng, prim, eng, user, user_scratchpad())
                                              : dnnl::reorder::primitive_desc(eng, user, eng, prim, user_scratchpad());
    o.reorder_scratch = pd.scratchpad_desc();
    o.reorder = dnnl::reorder(pd);
  }
  return o;
}

// A cached primitive with its operands. ok == false: oneDNN offers only a
// naive "ref" implementation (or none) here; the caller uses its own loop.
struct Prim {
  bool ok = false;
  dnnl::primitive prim;
  std::vector<Operand> operands;
  memory::desc scratch;
};

inline bool is_ref_impl(const char* info) { return std::string_view(info).starts_with("ref"); }

inline void run_reorder(const Operand& o, void* from, void* to, const memory::desc& from_md,
                        const memory::desc& to_md) {
  auto& eng = cpu_engine();
  memory src(from_md, eng, from), dst(to_md, eng, to);
  Buffer scratch(o.reorder_scratch.get_size());
  std::unordered_map<int, memory> args{{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  if (scratch.get()) args.emplace(DNNL_ARG_SCRATCHPAD, memory(o.reorder_scratch, eng, scratch.get()));
  o.reorder.execute(cpu_stream(), args);
}

// Runs p on user pointers (in operand order), reordering where layouts differ.
inline void execute(const Prim& p, const std::vector<void*>& ptrs) {
  auto& eng = cpu_engine();
  std::unordered_map<int, memory> args;
  std::vector<std::unique_ptr<Buffer>> temps;
  std::vector<void*> prim_ptrs(ptrs.size());
  for (size_t i = 0; i < p.operands.size(); ++i) {
    const Operand& o = p.operands[i];
    prim_ptrs[i] = ptrs[i];
    if (o.needs_reorder()) {
      temps.push_back(std::make_unique<Buffer>(o.prim.get_size()));
      prim_ptrs[i] = temps.back()->get();
      if (!o.output) run_reorder(o, ptrs[i], prim_ptrs[i], o.user, o.prim);
    }
    args.emplace(o.arg, memory(o.prim, eng, prim_ptrs[i]));
  }
  Buffer scratch(p.scratch.get_size());
  if (scratch.get()) args.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratch, eng, scratch.get()));
  p.prim.execute(cpu_stream(), args);
  for (size_t i = 0; i < p.operands.size(); ++i) {
    const Operand& o = p.operands[i];
    if (o.output && o.needs_reorder()) run_reorder(o, prim_ptrs[i], ptrs[i], o.prim, o.user);
  }
}

// Note [dnnl primitive cache]: creating a primitive costs 10-100 us (JIT), so
// each geometry is created once, in a map shared by all threads; entries are
// shared_ptrs so clearing an oversized map never frees one in use.
template <size_t N>
struct KeyHash {
  size_t operator()(const std::array<int64_t, N>& k) const {
    size_t h = 0xcbf29ce484222325ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 0x100000001b3ull;
    return h;
  }
};

template <size_t N>
class PrimCache {
 public:
  using Key = std::array<int64_t, N>;
  template <typename Make>
  std::shared_ptr<const Prim> get(const Key& key, Make&& make) {
    constexpr size_t kMaxEntries = 512;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second;
    if (map_.size() >= kMaxEntries) map_.clear();
    auto entry = std::make_shared<const Prim>(make());
    map_.emplace(key, entry);
    return entry;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Prim>, KeyHash<N>> map_;
};

}  // namespace ember::dnnl_util

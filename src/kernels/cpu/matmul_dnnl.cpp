// The CPU matmul kernel: oneDNN's matmul primitive for float32 and the
// 16-bit floats, and bf16 x bf16 -> float32 for native autocast (cached by
// shape), the reference loop for everything else.
#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "ember/core/allocator.h"
#include "kernels/scratch.h"
#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/linalg.h"

namespace ember {
namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One stream for every thread: with the OpenMP runtime a CPU stream holds no
// per-execution state (execution is synchronous, wait() returns at once).
dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

// Scratch for one call: see Note [kernel scratch] (kernels/scratch.h).
using Buffer = ScratchBuffer;

// Everything a primitive depends on: dtype, thread count (oneDNN sizes its
// work split when the primitive is created), shapes, strides, bias layout,
// alpha and beta. A batch-stride-0 operand broadcasts (batch dim of 1).
using Key = std::array<int64_t, 20>;  // see make_key

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 0xcbf29ce484222325ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 0x100000001b3ull;
    return h;
  }
};

struct Entry {
  bool ok = false;  // false: oneDNN has no fast kernel here; use a fallback
  dnnl::matmul prim;
  memory::desc a, b, c, bias, scratch;
  size_t scratch_bytes = 0;
};

memory::data_type dnnl_type(ScalarType t) {
  switch (t) {
    case ScalarType::BFloat16: return memory::data_type::bf16;
    case ScalarType::Float16: return memory::data_type::f16;
    default: return memory::data_type::f32;
  }
}

int64_t batch_of(const MatrixRef& x, int64_t batch) { return x.batch_stride == 0 ? 1 : batch; }

// A strided [batch, rows, cols] desc; 2-D when there is no batch. The batch
// stride of a broadcast operand is irrelevant, so any in-bounds value works.
memory::desc matrix_desc(const MatrixRef& x, int64_t batch, int64_t b, int64_t rows, int64_t cols,
                         memory::data_type dt) {
  if (batch == 1) return memory::desc({rows, cols}, dt, {x.row_stride, x.col_stride});
  int64_t bs = b == 1 ? rows * x.row_stride + cols * x.col_stride : x.batch_stride;
  return memory::desc({b, rows, cols}, dt, {bs, x.row_stride, x.col_stride});
}

Entry make_entry(const GemmArgs& g) {
  Entry e;
  auto dt = dnnl_type(g.dtype), ct = dnnl_type(g.c_dtype());
  int64_t ba = batch_of(g.a, g.batch), bb = batch_of(g.b, g.batch);
  e.a = matrix_desc(g.a, g.batch, ba, g.m, g.k, dt);
  e.b = matrix_desc(g.b, g.batch, bb, g.k, g.n, dt);
  e.c = matrix_desc(g.c, g.batch, g.batch, g.m, g.n, ct);
  if (g.bias) {
    e.bias = g.batch == 1 ? memory::desc({1, g.n}, ct, {g.n * g.bias_stride, g.bias_stride})
                          : memory::desc({1, 1, g.n}, ct, {g.n * g.bias_stride, g.n * g.bias_stride,
                                                           g.bias_stride});
  }
  dnnl::primitive_attr attr;
  // User scratchpad: a primitive that owns its scratchpad cannot run on two
  // threads at once, and the cache shares primitives between threads.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  float alpha = static_cast<float>(g.alpha.to_double()), beta = static_cast<float>(g.beta.to_double());
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops po;
    po.append_sum(beta);
    attr.set_post_ops(po);
  }
  try {
    dnnl::matmul::desc d = g.bias ? dnnl::matmul::desc(e.a, e.b, e.bias, e.c)
                                  : dnnl::matmul::desc(e.a, e.b, e.c);
    dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
    // "ref" kernels are naive loops: the reference GEMM (or float32 for the
    // 16-bit floats, on CPUs without native support) is faster.
    if (std::string_view(pd.impl_info_str()).starts_with("ref")) return e;
    e.scratch = pd.scratchpad_desc();
    e.scratch_bytes = e.scratch.get_size();
    e.prim = dnnl::matmul(pd);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;  // e.g. bf16 on a CPU without AVX-512
  }
  return e;
}

Key make_key(const GemmArgs& g) {
  // Batch strides only matter with a batch (matrix_desc ignores them otherwise).
  auto bs = [&](const MatrixRef& x) { return g.batch == 1 ? 0 : x.batch_stride; };
  return {static_cast<int64_t>(g.dtype),
          g.float32_c,
          get_num_threads(),
          g.batch,
          g.m,
          g.n,
          g.k,
          bs(g.a),
          g.a.row_stride,
          g.a.col_stride,
          bs(g.b),
          g.b.row_stride,
          g.b.col_stride,
          bs(g.c),
          g.c.row_stride,
          g.c.col_stride,
          g.bias ? g.bias_stride : 0,
          g.bias != nullptr,
          std::bit_cast<int64_t>(g.alpha.to_double()),
          std::bit_cast<int64_t>(g.beta.to_double())};
}

// Note [primitive cache]: creating a primitive costs 10-100 us (JIT), far
// more than running a small GEMM, so each shape is created once, in a map
// shared by all threads. Entries are shared_ptrs so a reset (when the map
// grows past kMaxEntries, e.g. with many sequence lengths) never frees one
// that a running call or a thread's slot still uses.
std::shared_ptr<const Entry> lookup(const Key& key, const GemmArgs& g) {
  constexpr size_t kMaxEntries = 1024;
  static std::mutex mutex;
  static std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxEntries) cache.clear();
  auto entry = std::make_shared<const Entry>(make_entry(g));
  cache.emplace(key, entry);
  return entry;
}

// A thread's recently used primitives with their dnnl::memory objects, so a
// repeated shape costs neither the lock nor four memory-object allocations
// (small GEMMs are dominated by such overhead); only the pointers are rebound.
struct Slot {
  Key key{};
  std::shared_ptr<const Entry> entry;
  memory a, b, c, bias;
};
constexpr size_t kSlots = 16;  // direct-mapped by key hash; a training step uses a handful of shapes

// Runs g through oneDNN; false when oneDNN has no fast kernel for it.
bool run_dnnl(const GemmArgs& g) {
  thread_local std::array<Slot, kSlots> slots;
  Key key = make_key(g);
  Slot& s = slots[KeyHash()(key) % kSlots];
  void* bias = const_cast<void*>(g.bias);
  if (!s.entry || s.key != key) {
    s.entry = lookup(key, g);
    s.key = key;
    if (!s.entry->ok) return false;
    auto& eng = cpu_engine();
    s.a = memory(s.entry->a, eng, g.a.data);
    s.b = memory(s.entry->b, eng, g.b.data);
    s.c = memory(s.entry->c, eng, g.c.data);
    s.bias = g.bias ? memory(s.entry->bias, eng, bias) : memory();
  } else {
    if (!s.entry->ok) return false;
    s.a.set_data_handle(g.a.data);
    s.b.set_data_handle(g.b.data);
    s.c.set_data_handle(g.c.data);
    if (g.bias) s.bias.set_data_handle(bias);
  }
  const Entry& e = *s.entry;
  Buffer scratch_buf(e.scratch_bytes);
  memory scratch = e.scratch_bytes ? memory(e.scratch, cpu_engine(), scratch_buf.get()) : memory();
  // The C API takes a plain array: no per-call map as the C++ execute() builds.
  std::array<dnnl_exec_arg_t, 5> args;
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, s.a.get()};
  args[n++] = {DNNL_ARG_WEIGHTS, s.b.get()};
  args[n++] = {DNNL_ARG_DST, s.c.get()};
  if (g.bias) args[n++] = {DNNL_ARG_BIAS, s.bias.get()};
  if (e.scratch_bytes) args[n++] = {DNNL_ARG_SCRATCHPAD, scratch.get()};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(e.prim.get(), cpu_stream().get(), n, args.data()),
                          "matmul: oneDNN execution failed");
  return true;
}

// Copies a strided [batch, rows, cols] operand of type From into a packed
// one of type To.
template <typename To, typename From>
void pack(const MatrixRef& src, int64_t batch, int64_t rows, int64_t cols, To* dst) {
  const From* s = static_cast<const From*>(src.data);
  parallel_for(0, batch * rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const From* row = s + (r / rows) * src.batch_stride + (r % rows) * src.row_stride;
      To* out = dst + r * cols;
      for (int64_t j = 0; j < cols; ++j) out[j] = static_cast<To>(static_cast<float>(row[j * src.col_stride]));
    }
  });
}

template <typename T>
void unpack(const float* src, int64_t batch, int64_t rows, int64_t cols, const MatrixRef& dst) {
  T* d = static_cast<T*>(dst.data);
  parallel_for(0, batch * rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* row = d + (r / rows) * dst.batch_stride + (r % rows) * dst.row_stride;
      const float* in = src + r * cols;
      for (int64_t j = 0; j < cols; ++j) row[j * dst.col_stride] = static_cast<T>(in[j]);
    }
  });
}

// A 16-bit float GEMM computed in float32 (converting in and out), the same
// rounding as torch's bf16 GEMM: float accumulation, one rounding at the end.
// T: a and b; C: c and bias (T, or float for bf16 -> float32).
template <typename T, typename C = T>
void run_via_float32(const GemmArgs& g) {
  int64_t ba = batch_of(g.a, g.batch), bb = batch_of(g.b, g.batch);
  Buffer a(sizeof(float) * ba * g.m * g.k), b(sizeof(float) * bb * g.k * g.n),
      c(sizeof(float) * g.batch * g.m * g.n), bias(g.bias ? sizeof(float) * g.n : 0);
  GemmArgs f = g;
  f.dtype = kFloat32;
  f.float32_c = false;
  f.a = {a.get(), ba == 1 ? 0 : g.m * g.k, g.k, 1};
  f.b = {b.get(), bb == 1 ? 0 : g.k * g.n, g.n, 1};
  f.c = {c.get(), g.m * g.n, g.n, 1};
  pack<float, T>(g.a, ba, g.m, g.k, static_cast<float*>(a.get()));
  pack<float, T>(g.b, bb, g.k, g.n, static_cast<float*>(b.get()));
  if (g.beta.to_double() != 0.0) pack<float, C>(g.c, g.batch, g.m, g.n, static_cast<float*>(c.get()));
  if (g.bias) {
    pack<float, C>({const_cast<void*>(g.bias), 0, 0, g.bias_stride}, 1, 1, g.n,
                   static_cast<float*>(bias.get()));
    f.bias = bias.get();
    f.bias_stride = 1;
  }
  if (!run_dnnl(f)) matmul_ref(f);
  unpack<C>(static_cast<const float*>(c.get()), g.batch, g.m, g.n, g.c);
}

void matmul_cpu(const GemmArgs& g) {
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  if (g.float32_c) {  // bf16 x bf16 -> float32 (native autocast)
    EMBER_ASSERT(g.dtype == kBFloat16, "matmul: float32_c takes bfloat16 operands, got {}", to_string(g.dtype));
    if (g.k == 0 || !run_dnnl(g)) run_via_float32<BFloat16, float>(g);
    return;
  }
  bool dnnl_dtype = g.dtype == kFloat32 || g.dtype == kBFloat16 || g.dtype == kFloat16;
  // oneDNN rejects k == 0; the reference loop handles it (c = beta * c + alpha * bias).
  if (!dnnl_dtype || g.k == 0) return matmul_ref(g);
  if (run_dnnl(g)) return;
  if (g.dtype == kBFloat16) run_via_float32<BFloat16>(g);
  else if (g.dtype == kFloat16) run_via_float32<Half>(g);
  else matmul_ref(g);
}

}  // namespace

EMBER_REGISTER_KERNEL(matmul, CPU, matmul_cpu);

}  // namespace ember

// PackedQGemm, its pool, and PreparedQLinearDynamic (kernels/qgemm.h): int8
// products on oneDNN matmuls with packed weights. Measured on the
// MLP's 784 -> 256 layer at batch 32 (Xeon, avx512_vnni, 2 threads): 15.6 µs
// with packed weights ("brg:avx512_core_vnni") against a fp32 prepared
// matmul's 49.8 µs; the plain-layout int8 path took longer than fp32.
#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "kernels/cpu/dnnl_steps.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/qgemm.h"

namespace ember {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct PackedQGemm::Impl {
  size_t bytes = 0;  // the packed weights and the scratchpad
  dnnl_steps::Block weights, scratch;
  memory src, dst;
  dnnl_steps::Step step;
};

PackedQGemm::PackedQGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedQGemm::~PackedQGemm() = default;

std::unique_ptr<PackedQGemm> PackedQGemm::make(int64_t m, int64_t n, int64_t k, const int8_t* w) {
  if (m <= 0 || n <= 0 || k <= 0 || k > kQGemmMaxK) return nullptr;
  auto r = std::make_unique<Impl>();
  try {
    auto& eng = dnnl_util::cpu_engine();
    const ThreadLimitGuard one_thread(1);  // planned for the one thread that runs it
    memory::desc src_md({m, k}, dt::u8, tag::ab), dst_md({m, n}, dt::s32, tag::ab), wei_any({k, n}, dt::s8, tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, dst_md), dnnl_util::user_scratchpad(), eng);
    if (dnnl_util::is_ref_impl(pd.impl_info_str())) return nullptr;
    r->weights = dnnl_steps::packed_copy(memory::desc({k, n}, dt::s8, tag::ba), w, pd.weights_desc());
    r->src = memory(src_md, eng, nullptr);
    r->dst = memory(dst_md, eng, nullptr);
    r->step = {dnnl::matmul(pd),
               {{DNNL_ARG_SRC, r->src},
                {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), eng, r->weights.get())},
                {DNNL_ARG_DST, r->dst}},
               pd.scratchpad_desc()};
    r->scratch = dnnl_steps::give_scratchpads({&r->step});
    r->bytes = pd.weights_desc().get_size() + pd.scratchpad_desc().get_size();
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<PackedQGemm>(new PackedQGemm(std::move(r)));
}

size_t PackedQGemm::bytes() const { return impl_->bytes; }

void PackedQGemm::run(const uint8_t* a, int32_t* c) {
  impl_->src.set_data_handle(const_cast<uint8_t*>(a));
  impl_->dst.set_data_handle(c);
  impl_->step.run();
}

struct PackedQGemmPool::Impl {
  // Free products by their rows, the oldest dropped first beyond 16 (two
  // threads' worth for a few batch sizes) or beyond 32 MiB of packed weights
  // and scratch, though the last two are kept whatever their size: a server
  // sees many batch sizes, and each product holds its own copy of the weights.
  static constexpr size_t kMostKept = 16;
  static constexpr size_t kBytesKept = size_t{32} << 20;
  std::mutex mu;
  std::vector<std::pair<int64_t, std::unique_ptr<PackedQGemm>>> free;
  size_t bytes = 0;
};

PackedQGemmPool::PackedQGemmPool() : impl_(std::make_unique<Impl>()) {}
PackedQGemmPool::~PackedQGemmPool() = default;

std::unique_ptr<PackedQGemm> PackedQGemmPool::take(int64_t m, int64_t n, int64_t k, const int8_t* w) {
  {
    const std::lock_guard<std::mutex> lock(impl_->mu);
    auto& free = impl_->free;
    for (auto it = free.end(); it != free.begin();) {
      --it;
      if (it->first != m) continue;
      std::unique_ptr<PackedQGemm> p = std::move(it->second);
      free.erase(it);
      impl_->bytes -= p->bytes();
      return p;
    }
  }
  return PackedQGemm::make(m, n, k, w);
}

size_t PackedQGemmPool::kept() const {
  const std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->free.size();
}

size_t PackedQGemmPool::bytes_kept() const {
  const std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->bytes;
}

void PackedQGemmPool::give(int64_t m, std::unique_ptr<PackedQGemm> p) {
  if (!p) return;
  const std::lock_guard<std::mutex> lock(impl_->mu);
  auto& free = impl_->free;
  impl_->bytes += p->bytes();
  free.emplace_back(m, std::move(p));
  while (free.size() > Impl::kMostKept || (free.size() > 2 && impl_->bytes > Impl::kBytesKept)) {
    impl_->bytes -= free.front().second->bytes();
    free.erase(free.begin());
  }
}

struct PreparedQLinearDynamic::Impl {
  int64_t m = 0, n = 0, k = 0;
  bool reduce_range = false;
  // One product per block of rows (Note [dynamic int8 rows]), each with its
  // own memories, scratchpad and copy of the packed weights, since the
  // blocks run at once.
  struct RowBlock {
    int64_t row = 0, rows = 0;
    std::unique_ptr<PackedQGemm> gemm;
  };
  std::vector<RowBlock> blocks;
};

PreparedQLinearDynamic::PreparedQLinearDynamic(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedQLinearDynamic::~PreparedQLinearDynamic() = default;

std::unique_ptr<PreparedQLinearDynamic> PreparedQLinearDynamic::make(int64_t m, int64_t n, int64_t k, const int8_t* w,
                                                                     bool reduce_range) {
  if (m <= 0 || n <= 0 || k <= 0 || k > kQGemmMaxK) return nullptr;
  if (!qgemm_exact(reduce_range)) return nullptr;  // qlinear_dynamic_f32 takes the reference loop there
  auto r = std::make_unique<Impl>();
  r->m = m, r->n = n, r->k = k, r->reduce_range = reduce_range;
  for (const auto& [b, e] : qlinear_dynamic_row_blocks(m, k, n, get_num_threads())) {
    std::unique_ptr<PackedQGemm> gemm = PackedQGemm::make(e - b, n, k, w);
    if (!gemm) return nullptr;
    r->blocks.push_back({b, e - b, std::move(gemm)});
  }
  return std::unique_ptr<PreparedQLinearDynamic>(new PreparedQLinearDynamic(std::move(r)));
}

void PreparedQLinearDynamic::run(const QLinearDynamicArgs& a) {
  Impl& r = *impl_;
  EMBER_CHECK(a.m == r.m && a.n == r.n && a.k == r.k && a.reduce_range == r.reduce_range,
              "PreparedQLinearDynamic: made for [{}, {}] x [{}, {}], called with [{}, {}] x [{}, {}]", r.m, r.k, r.n,
              r.k, a.m, a.k, a.n, a.k);
  qlinear_dynamic_f32_with(a, [&](const uint8_t* qx, int32_t* acc, int64_t row, int64_t rows) {
    for (Impl::RowBlock& blk : r.blocks)
      if (blk.row == row && blk.rows == rows) return blk.gemm->run(qx, acc);
    // A split made for another thread count (set_num_threads since make): the plain kernel, same integers.
    qgemm_u8s8s32(QGemmArgs{qx, a.k, a.w, a.k, acc, a.n, rows, a.n, a.k});
  });
}

}  // namespace ember

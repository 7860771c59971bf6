// Note [fused dynamic int8 LSTM]
// quant::rnn_layer_dynamic_int8 on an LSTM ran as ops: the input projection
// of every step at once through linear_dynamic (a [steps * batch, 4 * hidden]
// float tensor), then per step the hidden state through linear_dynamic
// (range, quantize, int8 GEMM, dequantize into a new tensor), the fused gates
// (vec::lstm_cell_f32), the masking and the stacking. Profiled on the
// issue-15 classifier (LSTM 32 -> 64, 50 steps, batch 64, 2 threads, the Xeon
// with avx512_vnni), the steps ran on one thread while the other spun (the
// gates alone were 47% of the wall time; a step's products are too small to
// repay a fork each), and the input projection took a quarter of the time,
// most of it writing and reading back its 3.2 MB of floats.
//
// Here the whole sequence runs in one team. Each thread owns a block of batch
// rows for every step and keeps its rows' state; per step it quantizes its
// rows' input and hidden state, multiplies both by the int8 weights and
// dequantizes into cache-resident gates. Rows share only the activation
// ranges (one scale per product, PyTorch's per-tensor dynamic quantization):
// the input's over the whole sequence, as the one big projection had it, and
// h's per step, so each step has one barrier where the threads pool their
// rows' ranges. The numbers are those of the ops: the same ranges (min and
// max are exact), quantize_u8, exact int32 products, dequantize_row and
// lstm_cell_f32 on the same operands, so the result does not depend on the
// thread count (tests/ops/test_qlstm_fused.cpp compares them bitwise).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/quant/qtensor.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/qgemm.h"
#include "kernels/qlstm.h"
#include "kernels/scratch.h"

namespace ember {
namespace {

// One product's activation terms (Note [dynamic int8 linear]): how to
// quantize, and the per-column offset and scale (n entries each).
struct Dequant {
  QActivationTerms q;
  uint32_t* offset = nullptr;
  float* scale = nullptr;

  void set(const QLstmProjection& p, int64_t n, QRange r) {
    q = dynamic_terms(r, p.reduce_range, p.colsum, p.scale, n, offset, scale);
  }
};

// One thread's batch rows [begin, end) for every step, and its scratch.
class RowBlock {
 public:
  // ih and hh: the block's products on packed weights, or null (the plain kernels then).
  RowBlock(const QLstmDynamicArgs& a, int64_t begin, int64_t end, PackedQGemm* ih, PackedQGemm* hh)
      : a_(a), begin_(begin), rows_(end - begin), n_(4 * a.hidden), packed_ih_(ih), packed_hh_(hh) {
    const auto rows = static_cast<size_t>(rows_), n = static_cast<size_t>(n_), hidden = static_cast<size_t>(a.hidden);
    size_t bytes = 0;
    auto plan = [&](size_t b) {
      const size_t at = bytes;
      bytes += (b + 63) / 64 * 64;
      return at;
    };
    const size_t acc = plan(rows * n * sizeof(int32_t)), gx = plan(rows * n * sizeof(float)),
                 gates = plan(rows * n * sizeof(float)), c_new = plan(rows * hidden * sizeof(float)),
                 terms = plan(4 * n * sizeof(float)), qx = plan(rows * static_cast<size_t>(a.input)),
                 qh = plan(rows * hidden);
    scratch_.emplace(bytes);
    auto* base = static_cast<char*>(scratch_->get());
    acc_ = reinterpret_cast<int32_t*>(base + acc);
    gx_ = reinterpret_cast<float*>(base + gx);
    gates_ = reinterpret_cast<float*>(base + gates);
    c_new_ = reinterpret_cast<float*>(base + c_new);
    auto* t = reinterpret_cast<float*>(base + terms);
    dq_x_.offset = reinterpret_cast<uint32_t*>(t), dq_x_.scale = t + n_;
    dq_h_.offset = reinterpret_cast<uint32_t*>(t + 2 * n_), dq_h_.scale = t + 3 * n_;
    qx_ = reinterpret_cast<uint8_t*>(base + qx);
    qh_ = reinterpret_cast<uint8_t*>(base + qh);
  }

  // The range of this block's inputs over every step.
  QRange x_range() const {
    QRange r;
    const int64_t in = a_.input;
    if (rows_ == 0) return r;
    if (a_.x_row == in) {  // time-major: a step's rows are contiguous
      for (int64_t t = 0; t < a_.steps; ++t) r = pooled(r, qrange_f32(x_at(t, begin_), rows_ * in));
    } else if (a_.x_step == in) {  // batch-major (batch_first): a row's steps are contiguous
      for (int64_t i = begin_; i < begin_ + rows_; ++i) r = pooled(r, qrange_f32(x_at(0, i), a_.steps * in));
    } else {
      for (int64_t t = 0; t < a_.steps; ++t)
        for (int64_t i = begin_; i < begin_ + rows_; ++i) r = pooled(r, qrange_f32(x_at(t, i), in));
    }
    return r;
  }
  QRange h_range() const { return qrange_f32(a_.h + begin_ * a_.hidden, rows_ * a_.hidden); }

  // The whole sequence's input range, known once.
  void start(QRange x) { dq_x_.set(a_.ih, n_, x); }

  // Step t once the range of the whole h is known.
  void step(int64_t t, QRange h_range) {
    if (rows_ == 0) return;
    const int64_t H = a_.hidden, in = a_.input;
    if (a_.x_row == in) {
      quantize_u8(x_at(t, begin_), qx_, rows_ * in, dq_x_.q.inv_scale, dq_x_.q.zero_point, dq_x_.q.qmax);
    } else {
      for (int64_t i = 0; i < rows_; ++i)
        quantize_u8(x_at(t, begin_ + i), qx_ + i * in, in, dq_x_.q.inv_scale, dq_x_.q.zero_point, dq_x_.q.qmax);
    }
    project(a_.ih, packed_ih_, dq_x_, qx_, in, gx_);
    dq_h_.set(a_.hh, n_, h_range);
    float* h = a_.h + begin_ * H;
    float* c = a_.c + begin_ * H;
    quantize_u8(h, qh_, rows_ * H, dq_h_.q.inv_scale, dq_h_.q.zero_point, dq_h_.q.qmax);
    project(a_.hh, packed_hh_, dq_h_, qh_, H, gates_);
    // h_new goes straight into the step's output rows, then becomes the state.
    float* out = a_.out + (t * a_.batch + begin_) * H;
    vec::lstm_cell_f32(gx_, gates_, c, out, c_new_, rows_, H);
    const auto row_bytes = static_cast<size_t>(H) * sizeof(float);
    for (int64_t i = 0; i < rows_; ++i) {
      if (a_.lengths && t >= a_.lengths[begin_ + i]) {  // ended: the state stays, the output is 0
        std::fill(out + i * H, out + (i + 1) * H, 0.0f);
        continue;
      }
      std::memcpy(h + i * H, out + i * H, row_bytes);
      std::memcpy(c + i * H, c_new_ + i * H, row_bytes);
    }
  }

 private:
  const float* x_at(int64_t t, int64_t row) const { return a_.x + t * a_.x_step + row * a_.x_row; }

  // dst [rows, 4 * hidden] = the float result of q [rows, k] (uint8) x p.w^T.
  void project(const QLstmProjection& p, PackedQGemm* packed, const Dequant& dq, const uint8_t* q, int64_t k,
               float* dst) {
    const QGemmArgs g{q, k, p.w, k, acc_, n_, rows_, n_, k};
    if (packed) packed->run(q, acc_);
    else if (a_.reference || !qgemm_exact(p.reduce_range)) qgemm_u8s8s32_ref(g);
    else qgemm_u8s8s32(g);
    for (int64_t i = 0; i < rows_; ++i) dequantize_row(acc_ + i * n_, dq.offset, dq.scale, p.bias, dst + i * n_, n_, false);
  }

  const QLstmDynamicArgs& a_;
  int64_t begin_, rows_, n_;
  PackedQGemm *packed_ih_, *packed_hh_;
  std::optional<ScratchBuffer> scratch_;
  int32_t* acc_ = nullptr;
  float *gx_ = nullptr, *gates_ = nullptr, *c_new_ = nullptr;
  Dequant dq_x_, dq_h_;
  uint8_t *qx_ = nullptr, *qh_ = nullptr;
};

int64_t step_of(const QLstmDynamicArgs& a, int64_t s) { return a.reverse ? a.steps - 1 - s : s; }

}  // namespace

int qlstm_layer_threads(int64_t steps, int64_t batch, int64_t input, int64_t hidden, int threads) {
  constexpr int64_t kMinRows = 4;
  const int64_t most = std::min<int64_t>(threads, batch / kMinRows);
  if (most < 2 || steps <= 0) return 1;
  // A row's step on one thread: its two products (oneDNN's int8 GEMM at 300
  // MACs per ns with VNNI, a third of that assumed without) and its gates,
  // about 4 ns per unit measured. Splitting pays a barrier per step (a third
  // of a region, Note [dynamic int8 rows]) and one region, and must save
  // twice that, since a spinning partner slows the work beside it.
  const double macs_per_us = cpu_has_vnni() ? 300e3 : 100e3;
  const double row_us = 4.0 * static_cast<double>(hidden * (input + hidden)) / macs_per_us +
                        4e-3 * static_cast<double>(hidden);
  const double step_us = row_us * static_cast<double>(batch);
  const double region_us = parallel_region_cost_us();
  const double saved_us = static_cast<double>(steps) * step_us * (1.0 - 1.0 / static_cast<double>(most));
  const double cost_us = region_us + static_cast<double>(steps) * region_us / 3.0;
  return saved_us > 2.0 * cost_us ? static_cast<int>(most) : 1;
}

void qlstm_layer_dynamic_f32(const QLstmDynamicArgs& a) {
  EMBER_CHECK(a.hidden <= kQGemmMaxK && a.input <= kQGemmMaxK,
              "lstm_dynamic_int8: input size {} or hidden size {} exceeds {} (int32 accumulation)", a.input, a.hidden,
              kQGemmMaxK);
  if (a.steps <= 0 || a.batch <= 0 || a.hidden <= 0) return;
  const int threads = qlstm_layer_threads(a.steps, a.batch, a.input, a.hidden, get_num_threads());
  // The ranges each thread finds for its rows, pooled at each step's barrier:
  // x's once (step 0), h's every step. h_part[s % 2]: a thread writes step
  // s + 2's entry only after the barrier of step s + 1, which its partners
  // pass after reading step s's.
  std::vector<QRange> x_part(static_cast<size_t>(threads)), h_part[2];
  h_part[0].resize(static_cast<size_t>(threads)), h_part[1].resize(static_cast<size_t>(threads));
  // Each block's two products on weights packed for its rows (small products
  // spend most of their time repacking plain weights otherwise), kept in the
  // weights' pools between calls and given back when the layer ends.
  struct Packed {
    int64_t rows = 0;
    std::unique_ptr<PackedQGemm> ih, hh;
  };
  struct Lent {
    const QLstmDynamicArgs& a;
    std::vector<Packed> blocks;
    ~Lent() {
      for (Packed& p : blocks) {
        if (a.ih.products) a.ih.products->give(p.rows, std::move(p.ih));
        if (a.hh.products) a.hh.products->give(p.rows, std::move(p.hh));
      }
    }
  } lent{a, std::vector<Packed>(static_cast<size_t>(threads))};
  auto make = [&](const QLstmProjection& p, int64_t rows, int64_t k) -> std::unique_ptr<PackedQGemm> {
    if (a.reference || !qgemm_exact(p.reduce_range) || rows == 0) return nullptr;
    return p.products ? p.products->take(rows, 4 * a.hidden, k, p.w) : PackedQGemm::make(rows, 4 * a.hidden, k, p.w);
  };
  for (int i = 0; i < threads; ++i) {
    Packed& p = lent.blocks[static_cast<size_t>(i)];
    p.rows = a.batch * (i + 1) / threads - a.batch * i / threads;
    p.ih = make(a.ih, p.rows, a.input);
    p.hh = make(a.hh, p.rows, a.hidden);
  }
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  auto rows = [&](int tid, int team) {
    // A team smaller than asked for (a busy machine) splits the rows among those it has.
    std::optional<RowBlock> block;
    auto attempt = [&](auto&& f) {
      try {
        f();
      } catch (...) {
        errors[static_cast<size_t>(tid)] = std::current_exception();
        failed = true;
      }
    };
    attempt([&] {
      // The packed products were made for `threads` blocks; a smaller team's blocks take the plain kernels.
      Packed none;
      Packed& p = team == threads ? lent.blocks[static_cast<size_t>(tid)] : none;
      block.emplace(a, a.batch * tid / team, a.batch * (tid + 1) / team, p.ih.get(), p.hh.get());
    });
    auto pool = [&](const std::vector<QRange>& part) {
      QRange r;  // from 0 and 0, as qlinear_dynamic_f32's team; choose_qparams holds 0 anyway
      for (int i = 0; i < team; ++i) r = pooled(r, part[static_cast<size_t>(i)]);
      return r;
    };
    for (int64_t s = 0; s < a.steps; ++s) {
      std::vector<QRange>& h = h_part[s % 2];
      if (!failed) {
        attempt([&] {
          if (s == 0) x_part[static_cast<size_t>(tid)] = block->x_range();
          h[static_cast<size_t>(tid)] = block->h_range();
        });
      }
      if (team > 1) team_barrier();  // every thread meets every step, even after a failure, so none waits forever
      if (failed) continue;
      attempt([&] {
        if (s == 0) block->start(pool(x_part));
        block->step(step_of(a, s), pool(h));
      });
    }
  };
  if (threads == 1) {
    const ThreadLimitGuard one_thread(1);  // oneDNN's small products too (Note [dynamic int8 rows])
    rows(0, 1);
  } else {
    parallel_team(threads, rows);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ember

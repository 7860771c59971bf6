// reduce_kernel: turns a small "reducer" (init / step / merge / finish) into a
// parallel CPU kernel over a ReduceIter (Note [ReduceIter]).
//
// A reducer R provides
//   using in_t, acc_t, out_t;
//   acc_t init() const;                 // identity
//   acc_t step(acc_t a, in_t x) const;  // fold one element
//   acc_t merge(acc_t a, acc_t b) const;
//   out_t finish(acc_t a) const;
// and optionally `acc_t row(const in_t* x, int64_t n) const` (a SIMD loop for
// one contiguous row), detected with has_row_v.
#pragma once

#include <algorithm>
#include <memory>

#include "ember/core/parallel.h"
#include "kernels/reduce.h"

namespace ember::reduce_detail {

template <typename R, typename = void>
struct HasRow : std::false_type {};
template <typename R>
struct HasRow<R, std::void_t<decltype(std::declval<const R&>().row(nullptr, 0))>> : std::true_type {};
template <typename R>
constexpr bool has_row_v = HasRow<R>::value;

// Folds a contiguous row with 8 independent accumulators: hides latency and
// lets the compiler vectorize without reassociating one chain.
template <typename R>
typename R::acc_t fold_row(const R& r, const typename R::in_t* x, int64_t n) {
  if constexpr (has_row_v<R>) {
    return r.row(x, n);
  } else {
    using A = typename R::acc_t;
    constexpr int K = 8;
    A acc[K];
    for (int k = 0; k < K; ++k) acc[k] = r.init();
    int64_t i = 0;
    for (; i + K <= n; i += K)
      for (int k = 0; k < K; ++k) acc[k] = r.step(acc[k], x[i + k]);
    for (; i < n; ++i) acc[0] = r.step(acc[0], x[i]);
    for (int k = 1; k < K; ++k) acc[0] = r.merge(acc[0], acc[k]);
    return acc[0];
  }
}

// inner == 1: one output per contiguous row of length n.
template <typename R>
void reduce_rows(const R& r, const typename R::in_t* in, typename R::out_t* out, int64_t rows,
                 int64_t n) {
  using A = typename R::acc_t;
  const int threads = get_num_threads();
  if (rows >= threads || n <= kGrainSize) {
    int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = r.finish(fold_row(r, in + o * n, n));
    });
    return;
  }
  // Few long rows: split each row into per-thread chunks, then merge.
  int64_t chunks = std::min<int64_t>(threads, (n + kGrainSize - 1) / kGrainSize);
  int64_t len = (n + chunks - 1) / chunks;
  // unique_ptr, not vector: acc_t may be bool.
  auto partial = std::make_unique<A[]>(static_cast<size_t>(chunks));
  for (int64_t o = 0; o < rows; ++o) {
    const typename R::in_t* x = in + o * n;
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t s = c * len, m = std::max<int64_t>(0, std::min(n, s + len) - s);
        partial[c] = fold_row(r, x + s, m);
      }
    });
    A acc = partial[0];
    for (int64_t c = 1; c < chunks; ++c) acc = r.merge(acc, partial[c]);
    out[o] = r.finish(acc);
  }
}

// Accumulates rows [r0, r1) of one [reduce, inner] slab into acc[0, len),
// columns [j0, j0 + len). Independent lanes: the compiler vectorizes it.
template <typename R>
void fold_columns(const R& r, const typename R::in_t* slab, int64_t inner, int64_t r0, int64_t r1,
                  int64_t j0, int64_t len, typename R::acc_t* acc) {
  for (int64_t q = r0; q < r1; ++q) {
    const typename R::in_t* x = slab + q * inner + j0;
    for (int64_t k = 0; k < len; ++k) acc[k] = r.step(acc[k], x[k]);
  }
}

// inner > 1: out[o, j] folds in[o, 0..n, j] row by row. Tiles are wide
// (about inner / threads columns) so each thread streams long contiguous
// runs of every row; narrow tiles would touch a new page per row.
template <typename R>
void reduce_columns(const R& r, const typename R::in_t* in, typename R::out_t* out, int64_t outer,
                    int64_t n, int64_t inner) {
  using A = typename R::acc_t;
  const int threads = get_num_threads();
  int64_t width = std::max<int64_t>(256, (inner + threads - 1) / threads);
  width = std::min<int64_t>(std::min<int64_t>(width, 16384), inner);
  const int64_t tiles_per_row = (inner + width - 1) / width;
  const int64_t tiles = outer * tiles_per_row;
  if (tiles < threads && n * inner * outer > kGrainSize && n >= 2 * threads) {
    // Too few tiles to share: split the reduced axis, one partial block per thread.
    int64_t chunks = std::min<int64_t>(threads, n);
    int64_t len = (n + chunks - 1) / chunks;
    const int64_t total = chunks * outer * inner;
    auto partial = std::make_unique<A[]>(static_cast<size_t>(total));
    std::fill(partial.get(), partial.get() + total, r.init());
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        for (int64_t o = 0; o < outer; ++o)
          fold_columns(r, in + o * n * inner, inner, c * len, std::min(n, (c + 1) * len), 0, inner,
                       partial.get() + (c * outer + o) * inner);
    });
    for (int64_t i = 0; i < outer * inner; ++i) {
      A acc = partial[i];
      for (int64_t c = 1; c < chunks; ++c) acc = r.merge(acc, partial[c * outer * inner + i]);
      out[i] = r.finish(acc);
    }
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(width * n, 1));
  parallel_for(0, tiles, grain, [&](int64_t b, int64_t e) {
    auto acc = std::make_unique<A[]>(static_cast<size_t>(width));
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / tiles_per_row, j0 = (t % tiles_per_row) * width;
      int64_t len = std::min(width, inner - j0);
      std::fill(acc.get(), acc.get() + len, r.init());
      fold_columns(r, in + o * n * inner, inner, 0, n, j0, len, acc.get());
      for (int64_t k = 0; k < len; ++k) out[o * inner + j0 + k] = r.finish(acc[k]);
    }
  });
}

}  // namespace ember::reduce_detail

namespace ember {

template <typename R>
void reduce_kernel(const ReduceIter& it, const R& r) {
  if (it.outer * it.inner == 0) return;
  const auto* in = static_cast<const typename R::in_t*>(it.in);
  auto* out = static_cast<typename R::out_t*>(it.out);
  if (it.inner == 1)
    reduce_detail::reduce_rows(r, in, out, it.outer, it.reduce);
  else
    reduce_detail::reduce_columns(r, in, out, it.outer, it.reduce, it.inner);
}

}  // namespace ember

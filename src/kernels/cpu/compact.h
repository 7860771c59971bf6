// compact: the positions where a predicate holds, in order, found in
// parallel (count per chunk, prefix sum, then write) — masked_select, nonzero.
#pragma once

#include <algorithm>
#include <vector>

#include "ember/core/parallel.h"

namespace ember {

// Calls alloc(total) once, then emit(position, rank) for every position in
// [0, n) where pred(position) holds; rank is its place among those.
template <typename Pred, typename Alloc, typename Emit>
void compact(int64_t n, const Pred& pred, const Alloc& alloc, const Emit& emit) {
  const int64_t chunks = std::clamp<int64_t>(n / kGrainSize, 1, std::max(get_num_threads(), 1));
  const int64_t step = (n + chunks - 1) / chunks;
  std::vector<int64_t> counts(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t cnt = 0;
      for (int64_t p = c * step, end = std::min(n, p + step); p < end; ++p) cnt += pred(p) ? 1 : 0;
      counts[c + 1] = cnt;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) counts[c + 1] += counts[c];
  alloc(counts[chunks]);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t rank = counts[c];
      for (int64_t p = c * step, end = std::min(n, p + step); p < end; ++p)
        if (pred(p)) emit(p, rank++);
    }
  });
}

}  // namespace ember

// parallel_for over OpenMP.
#include "ember/core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "core/adaptive_threads.h"
#include "core/cpu_quota.h"

#include "ember/core/error.h"

namespace ember {

int get_num_threads() {
  detail::adapt_thread_count(false);
  return omp_get_max_threads();
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads: expected a positive thread count, got {}", n);
  detail::on_chosen_thread_count(n);
  omp_set_num_threads(n);
}

int default_num_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    std::string_view s(env);
    int n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    // "4" (or the first level of "4,2"); anything else falls through to the CPUs.
    if (ec == std::errc() && n > 0 && (end == s.data() + s.size() || *end == ',')) return n;
  }
  return cpu_quota::threads_for(cpu_quota::affinity_cpus(), cpu_quota::quota_cpus("/sys/fs/cgroup"));
}

bool in_parallel_region() { return omp_in_parallel() != 0; }

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> f) {
  if (begin >= end) return;
  int64_t n = end - begin;
  if (n > grain) detail::adapt_thread_count(false);
  int max_threads = omp_get_max_threads();
  if (n <= grain || max_threads == 1 || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  int64_t threads = std::min<int64_t>(max_threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
  std::exception_ptr error;
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    int64_t tid = omp_get_thread_num();
    int64_t nt = omp_get_num_threads();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = begin + tid * chunk;
    int64_t e = std::min(end, b + chunk);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
#pragma omp critical(ember_parallel_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

void parallel_team(int threads, FunctionRef<void(int tid, int team)> f) {
  detail::adapt_thread_count(false);
  threads = std::min(threads, omp_get_max_threads());
  if (threads <= 1 || omp_in_parallel()) {
    f(0, 1);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    try {
      f(omp_get_thread_num(), omp_get_num_threads());
    } catch (...) {
#pragma omp critical(ember_parallel_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

void team_barrier() {
#pragma omp barrier
}

namespace {

// The median of a few nearly empty regions of `threads` threads, from
// outside any region, for at most about a millisecond: on a busy machine a
// region waits for a core, and the figure says so without the measurement
// itself taking long. Capped, because a figure frozen at a moment of
// contention must not keep every later product on one thread.
double measure_region_cost_us(int threads) {
  constexpr int kRuns = 31, kMinRuns = 3;
  constexpr double kBudgetUs = 1000.0, kCapUs = 50.0;
  std::array<double, kRuns> us{};
  int runs = 0;
  double spent = 0;
  while (runs < kRuns && (runs < kMinRuns || spent < kBudgetUs)) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      // Next to nothing: the fork and the join are what is measured (GCC
      // drops a region whose body is empty).
      volatile int tid = omp_get_thread_num();
      (void)tid;
    }
    us[static_cast<size_t>(runs)] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    spent += us[static_cast<size_t>(runs++)];
  }
  std::nth_element(us.begin(), us.begin() + runs / 2, us.begin() + runs);
  return std::min(us[static_cast<size_t>(runs / 2)], kCapUs);
}

}  // namespace

double parallel_region_cost_us() {
  // Inside a region a new one would run inline; measuring there would cache
  // nothing true, so nested callers get a generous figure instead.
  constexpr double kNestedGuessUs = 10.0;
  if (omp_in_parallel()) return kNestedGuessUs;
  // At least two threads, whatever the caller's limit (a ThreadLimitGuard's
  // 1 would measure no fork at all).
  static const double cost = measure_region_cost_us(std::max(2, omp_get_max_threads()));
  return cost;
}

ThreadLimitGuard::ThreadLimitGuard(int n) : previous_(omp_get_max_threads()) {
  EMBER_CHECK(n > 0, "ThreadLimitGuard: expected a positive thread count, got {}", n);
  detail::pin_thread_count(1);
  omp_set_num_threads(std::min(n, previous_));
}

ThreadLimitGuard::~ThreadLimitGuard() {
  omp_set_num_threads(previous_);
  detail::pin_thread_count(-1);
}

}  // namespace ember

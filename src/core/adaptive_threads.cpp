// Note [adaptive thread count]
// A two-thread step that shares a core with another busy process waits at
// every fork and join for its descheduled partner: issue 21 measured a small
// GRU training step at 0.21x and W2 at 0.26x of one thread with a one-core
// hog, and no wait policy fixed every workload (docs/performance.md). What
// works is fewer threads while the CPUs are taken, decided for the whole
// process rather than per op (small products alone on one thread made W2
// slower under the hog: the worker then slept between the remaining forks).
//
// So, every 200 ms at most (50 ms after start-up), the first fork or
// thread-count query after the deadline reads /proc/stat for the affinity
// mask's CPUs and the process's own CPU time: their difference is the other
// processes' load in cores
// (a busy loop on one of two CPUs reads 0.7-0.9 while Ember's two threads
// fight it, 1.0 while Ember runs one, 0.0 on a quiet machine).
// cpu_load::next_thread_count turns it into a count: drop when the free CPUs
// fall a third of a core short, rise when a spare core appears. The count is
// applied to each thread's OpenMP count, which oneDNN's primitives read too.
//
// Lowering happens at any fork; raising only at safe points (the start of a
// backward pass, an optimizer step, a runtime Session::run), because a
// kernel may create a oneDNN primitive for one count and then run it: one
// made for fewer threads may have sized its per-thread scratch for them.
// Ember's own kernels take whatever team they are given.
//
// Only the default count adapts: float results can depend on the thread
// count (a reduction split per thread, oneDNN's weight-gradient sums), and a
// user who chose a count, or runs the tests, gets exactly that count and
// bitwise-repeatable runs. EMBER_ADAPTIVE_THREADS=1/0 forces it on (a chosen
// count is then the ceiling) or off; EMBER_ADAPTIVE_THREADS_LOG=1 prints each
// change of the count and the load behind it to stderr.
#include "core/adaptive_threads.h"

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "core/cpu_load.h"
#include "ember/core/adaptive_threads.h"
#include "ember/core/parallel.h"

namespace ember {
namespace {

constexpr int64_t kSampleIntervalNs = 200'000'000;
// The first reading comes sooner: a process that starts next to a busy
// neighbour would otherwise spend its first 200 ms at a third of its speed
// (10 ticks of two CPUs still tell a held core, 0.7-0.9, from noise).
constexpr int64_t kFirstSampleNs = 50'000'000;

thread_local int tl_pinned = 0;

int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// EMBER_ADAPTIVE_THREADS: 1 on, 0 off, unset: on when OMP_NUM_THREADS is unset.
std::optional<bool> forced_policy() {
  const char* env = std::getenv("EMBER_ADAPTIVE_THREADS");
  if (!env || !*env) return std::nullopt;
  return std::strcmp(env, "0") != 0;
}

class LoadMonitor {
 public:
  LoadMonitor() : forced_(forced_policy()), cpus_(cpu_load::affinity_cpu_list()) {
    requested_ = default_num_threads();
    allowed_.store(requested_);
    const bool readable = take(last_);
    enabled_.store(readable && forced_.value_or(std::getenv("OMP_NUM_THREADS") == nullptr));
    deadline_.store(clock_ns(CLOCK_MONOTONIC_COARSE) + kFirstSampleNs);
  }

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  int allowed() const { return allowed_.load(std::memory_order_relaxed); }

  void set_enabled(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (on && !enabled_.load()) {
      cpus_ = cpu_load::affinity_cpu_list();  // the mask may have changed since start-up
      requested_ = omp_get_max_threads();
      allowed_.store(requested_);
      take(last_);
      deadline_.store(clock_ns(CLOCK_MONOTONIC_COARSE) + kFirstSampleNs);
    }
    enabled_.store(on && last_.wall_ns != 0);
  }

  void on_chosen(int n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (forced_.value_or(false)) {
      requested_ = n;
      allowed_.store(n);
    } else {
      enabled_.store(false);
    }
  }

  void sample_if_due() {
    const int64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
    if (now < deadline_.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || now < deadline_.load()) return;  // another thread is sampling
    deadline_.store(now + kSampleIntervalNs);
    Sample next;
    if (!take(next)) return;
    const double wall_s = static_cast<double>(next.wall_ns - last_.wall_ns) * 1e-9;
    if (wall_s > 0) {
      const double own = static_cast<double>(next.cpu_ns - last_.cpu_ns) * 1e-9 / wall_s;
      const int cpus = static_cast<int>(cpus_.size());
      const double other = cpu_load::other_cores(last_.ticks, next.ticks, cpus, own);
      const int was = allowed_.load();
      const int now_allowed = cpu_load::next_thread_count(was, requested_, cpus, other);
      allowed_.store(now_allowed);
      if (log_ && now_allowed != was)
        std::fprintf(stderr, "ember: threads %d -> %d (other processes kept %.2f of %d CPUs busy)\n", was,
                     now_allowed, other, cpus);
    }
    last_ = next;
  }

 private:
  struct Sample {
    cpu_load::Ticks ticks;
    int64_t wall_ns = 0;
    int64_t cpu_ns = 0;
  };

  bool take(Sample& s) const {
    const auto text = cpu_load::read_proc_stat_cpu_lines();
    if (!text) return false;
    const auto ticks = cpu_load::parse_proc_stat(*text, cpus_);
    if (!ticks) return false;
    s.ticks = *ticks;
    s.wall_ns = clock_ns(CLOCK_MONOTONIC);
    s.cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    return true;
  }

  const std::optional<bool> forced_;
  const bool log_ = std::getenv("EMBER_ADAPTIVE_THREADS_LOG") != nullptr;
  std::mutex mutex_;  // guards cpus_, requested_ and last_; sampling only try-locks it
  std::vector<int> cpus_;
  int requested_ = 1;
  Sample last_;
  std::atomic<bool> enabled_{false};
  std::atomic<int> allowed_{1};
  std::atomic<int64_t> deadline_{0};
};

LoadMonitor& monitor() {
  static auto* m = new LoadMonitor();  // NOLINT: lives until exit; threads still running then query it
  return *m;
}

}  // namespace

namespace detail {

void adapt_thread_count(bool safe_point) {
  LoadMonitor& m = monitor();
  if (!m.enabled() || tl_pinned > 0 || omp_in_parallel()) return;
  m.sample_if_due();
  const int want = m.allowed();
  const int have = omp_get_max_threads();
  if (want < have || (safe_point && want > have)) omp_set_num_threads(want);
}

void on_chosen_thread_count(int n) { monitor().on_chosen(n); }

void pin_thread_count(int delta) { tl_pinned += delta; }

}  // namespace detail

bool adaptive_threads() { return monitor().enabled(); }

void set_adaptive_threads(bool on) { monitor().set_enabled(on); }

}  // namespace ember

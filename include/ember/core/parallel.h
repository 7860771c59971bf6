// Intra-op parallelism: one OpenMP thread pool for Ember and oneDNN, so the
// two never oversubscribe the cores.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace ember {

// A non-owning reference to a callable (cheaper than std::function).
template <typename Sig>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>, int> = 0>
  FunctionRef(F&& f)  // NOLINT
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

// Elements below which splitting work across threads costs more than it saves.
constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);  // a chosen count, kept exactly: see ember/core/adaptive_threads.h
// The threads a default run should use: OMP_NUM_THREADS when set, else the
// CPUs of this process's affinity mask capped by its cgroup CPU quota
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us; rounded up).
int default_num_threads();
bool in_parallel_region();

// Runs f(chunk_begin, chunk_end) over [begin, end) split across threads when
// the range exceeds grain; serially (one call) otherwise or when nested.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> f);

// Runs f(tid, team) once on each of up to `threads` threads at once (at
// most get_num_threads(); fewer when OpenMP gives fewer; one when nested), for work whose phases must meet:
// team_barrier() inside f waits for the whole team, so every thread must call
// it the same number of times. An exception thrown by f is rethrown after the
// team ends; throw only after the last barrier.
void parallel_team(int threads, FunctionRef<void(int tid, int team)> f);
void team_barrier();

// What starting and joining a team of get_num_threads() threads (at least
// two) costs on this machine, in microseconds: the median of a few empty
// regions, measured once, on the first call from outside a region, and
// capped at 50 µs (a busy machine's figure is kept for the process's life). Kernels compare it with their work to decide whether to
// fork at all (1 µs on a quiet bare-metal machine; 4 µs on the 2-vCPU VMs of
// issue 15's measurements, where small products ran faster on one thread).
double parallel_region_cost_us();

// While alive, parallel regions started by the calling thread (OpenMP's and
// oneDNN's) use at most n threads; restores the previous count.
class ThreadLimitGuard {
 public:
  explicit ThreadLimitGuard(int n);
  ~ThreadLimitGuard();
  ThreadLimitGuard(const ThreadLimitGuard&) = delete;
  ThreadLimitGuard& operator=(const ThreadLimitGuard&) = delete;

 private:
  int previous_;
};

}  // namespace ember

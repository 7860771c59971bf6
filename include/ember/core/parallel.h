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
void set_num_threads(int n);
// The threads a default run should use: OMP_NUM_THREADS when set, else the
// CPUs of this process's affinity mask capped by its cgroup CPU quota
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us; rounded up).
int default_num_threads();
bool in_parallel_region();

// Runs f(chunk_begin, chunk_end) over [begin, end) split across threads when
// the range exceeds grain; serially (one call) otherwise or when nested.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> f);

}  // namespace ember

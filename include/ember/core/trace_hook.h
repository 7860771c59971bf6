// The tracing hook core declares and jit implements (like the autograd slot):
// ops report each kernel they dispatch to the thread's TraceHook, so ops never
// include jit. Off (the pointer is null) it costs one thread-local load and a
// branch per op; see Note [trace hook] in src/core/trace_hook.cpp.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/core/scalar.h"
#include "ember/core/scalar_type.h"

namespace ember {

class Tensor;
enum class Op : uint16_t;

// One attribute of a recorded op (stride, dim, eps, a fill value...).
struct TraceAttr {
  using Value = std::variant<bool, int64_t, double, Scalar, ScalarType, std::vector<int64_t>, std::string>;
  std::string name;
  Value value;
};
using TraceAttrs = std::vector<TraceAttr>;

class TraceHook {
 public:
  virtual ~TraceHook() = default;
  // A kernel ran: `outputs` were computed from `inputs` (a null pointer or an
  // undefined tensor is an absent optional input, e.g. a conv without bias).
  // An output that is also an input was written in place.
  virtual void record(Op op, const std::vector<const Tensor*>& inputs, const std::vector<const Tensor*>& outputs,
                      TraceAttrs attrs) = 0;
  // A composite op that the graph keeps whole (kind "rnn_layer": the jit
  // interpreter calls the same function), recorded like a kernel; its inner
  // ops ran under a TraceHookPause.
  virtual void record_composite(std::string_view kind, const std::vector<const Tensor*>& inputs,
                                const std::vector<const Tensor*>& outputs, TraceAttrs attrs) = 0;
  // `view` is a new view (sizes, strides, offset) of `base`'s storage.
  virtual void view(const Tensor& base, const Tensor& view) = 0;
  // The host is about to read `t`'s values (`what`: "item()", "to_vector()").
  virtual void host_read(const Tensor& t, const char* what) = 0;
  // An op the graph cannot represent ran (`why` says what to do instead).
  virtual void unsupported(std::string_view op, std::string_view why) = 0;
};

namespace detail {
// Read by every op; constinit so the inline read is one thread-pointer load.
extern thread_local constinit TraceHook* tls_trace_hook;
}  // namespace detail

// The active hook of this thread, or null when nothing is tracing.
inline TraceHook* trace_hook() { return detail::tls_trace_hook; }

// Installs `hook` for this thread for its lifetime (jit::trace uses it).
class TraceHookGuard {
 public:
  explicit TraceHookGuard(TraceHook* hook) : prev_(detail::tls_trace_hook) { detail::tls_trace_hook = hook; }
  ~TraceHookGuard() { detail::tls_trace_hook = prev_; }
  TraceHookGuard(const TraceHookGuard&) = delete;
  TraceHookGuard& operator=(const TraceHookGuard&) = delete;

 private:
  TraceHook* prev_;
};

// Hides ops from the hook for its lifetime: an interpreter replaying a graph,
// or an op whose inner kernels another record already describes.
class TraceHookPause {
 public:
  TraceHookPause() : prev_(detail::tls_trace_hook) { detail::tls_trace_hook = nullptr; }
  ~TraceHookPause() { detail::tls_trace_hook = prev_; }
  TraceHookPause(const TraceHookPause&) = delete;
  TraceHookPause& operator=(const TraceHookPause&) = delete;

 private:
  TraceHook* prev_;
};

}  // namespace ember
